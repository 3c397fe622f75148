import { fail, ok, type Result } from "../../core/problem";
import { hooksAt, runChain } from "../../hooks/chain";
import { admitText } from "../../protect";
import type { TurnBody } from "../../protocol/http";
import type { Loaded } from "./load";
import type { Pulled } from "./pull";
import type { Staged } from "./stage";

/**
 * The `input` hooks (docs/hooks.md): each may rewrite the user's message or refuse it; the first refusal ends the turn
 * before anything runs or is stored. A rewrite is admitted later like the user's own words (the trust boundary).
 */
export async function hookInput(d: Loaded & Pulled): Promise<Result<Staged<{ body: TurnBody }>>> {
  const message = d.body.message;
  const hooks = hooksAt(d.hooks.hooks, "input").length;
  if (message === undefined || hooks === 0) return ok({ out: { body: d.body }, decided: { hooks: 0 } });
  const outcome = await runChain(d.hooks, "input", message, {
    payload: (text) => ({ message: text }),
    apply: (text, decision) => (decision.action === "rewrite" ? { state: decision.message } : { state: text, stop: decision.action === "refuse" }),
    closed: (_, why) => ({ action: "refuse", reason: why }),
  });
  const stopped = outcome.stoppedBy;
  if (stopped?.decision.action === "refuse") {
    const reason = admitText(stopped.decision.reason, { nonce: d.nonce }).text;
    return fail("not-accepted", `hook '${stopped.hook.id}' refused the message: ${reason}`, [{ path: "message", message: reason }]);
  }
  return ok({ out: { body: { ...d.body, message: outcome.state } }, decided: { hooks, rewritten: outcome.state !== message } });
}
