/**
 * The `output` hooks (docs/hooks.md): each reads the model's answer (its text and its calls) with the user's request,
 * and accepts it or rejects it with a note. The first rejection decides; a hook failing closed rejects.
 */
import { openTag } from "../core/runtime-tag";
import { admitText } from "../protect";
import { hooksAt, runChain, type HookScope } from "./chain";

export interface ModelAnswer {
  /** The answer's text; anything else (content parts) is read as none. */
  content: unknown;
  tool_calls?: readonly { id: string; function: { name: string; arguments: string } }[] | undefined;
}

export type OutputReview = { verdict: "accept"; hooks: number } | { verdict: "reject"; hooks: number; hook: string; note: string };

export async function reviewOutput(scope: HookScope, input: { request: string | null; reply: ModelAnswer; attempt: number }, nonce: string | null): Promise<OutputReview> {
  const hooks = hooksAt(scope.hooks, "output").length;
  if (hooks === 0) return { verdict: "accept", hooks };
  const answer = {
    content: typeof input.reply.content === "string" ? input.reply.content : null,
    toolCalls: (input.reply.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
  };
  const outcome = await runChain(scope, "output", null, {
    payload: () => ({ request: input.request, answer, attempt: input.attempt }),
    apply: (state, decision) => ({ state, stop: decision.action === "reject" }),
    closed: (_, why) => ({ action: "reject", note: why }),
  });
  const stopped = outcome.stoppedBy;
  // The note is an app's text: it reaches the model (a regeneration) and the frontend only past the trust boundary.
  if (stopped?.decision.action === "reject") return { verdict: "reject", hooks, hook: stopped.hook.id, note: admitText(stopped.decision.note, { nonce }).text };
  return { verdict: "accept", hooks };
}

/** What the model reads when it is asked again after a rejection: the hook's note, in the runtime's tag. */
export function rejectionNote(review: Extract<OutputReview, { verdict: "reject" }>, nonce: string | null): string {
  return `${openTag("system_reminder", nonce, 'kind="output_rejected"')}\nYour previous answer was not accepted (${review.hook}): ${review.note}\nAnswer again, taking this into account.\n</system_reminder>`;
}
