import type { TurnBody } from "../protocol/http";
import { taskStateLine, wrapTaskState } from "../artifacts/task-state";
import type { AppendixSection } from "../core/assemble";
import type { OmissionReason } from "../protocol/evidence";
import type { ConversationScope } from "./scope";
import { recallForTurn, wrapMemoryFence } from "../memory";

export interface TurnSections {
  sections: AppendixSection[];
  omitted: { id: string; reason: OmissionReason }[];
  /** Why memory could not be read, when it could not; the turn goes on without it. */
  memoryError?: string | undefined;
}

/**
 * The appendix blocks beside the context markers: memory recalled for the
 * user's message from the conversation's namespace chain (for agents that
 * read memory), and the task state the turn carries.
 */
export async function turnSections(
  scope: Pick<ConversationScope, "memory" | "owner" | "meta">,
  turn: { body: TurnBody; nonce: string | null; agent: { memory: boolean }; message: string | undefined },
): Promise<TurnSections> {
  const { memory, owner } = scope;
  const { body, nonce, agent, message } = turn;
  const sections: AppendixSection[] = [];
  const omitted: TurnSections["omitted"] = [];
  let memoryError: string | undefined;
  if (agent.memory && message !== undefined) {
    const namespaces = { ...owner, session: scope.meta.conversationId, ...(body.task ? { task: body.task } : {}) };
    const options = {
      nonce,
      ...(body.budget?.memoryTokens === undefined ? {} : { budgetTokens: body.budget.memoryTokens }),
      ...(memory.halfLifeHours === undefined ? {} : { halfLifeHours: memory.halfLifeHours }),
    };
    const recalled = await recallForTurn(memory.kv, namespaces, message, options);
    sections.push({ kind: "memory", entries: recalled.selected.map((m) => ({ id: m.id, text: m.entry })), wrap: (entries) => wrapMemoryFence(entries, nonce) });
    for (const o of recalled.omitted) omitted.push({ id: `memory:${o.id}`, reason: o.reason });
    memoryError = recalled.error;
  }
  if (body.taskState?.length) {
    sections.push({ kind: "task_state", entries: body.taskState.map((ref) => ({ id: ref.pointer, text: taskStateLine(ref, nonce) })), wrap: (lines) => wrapTaskState(lines, nonce) });
  }
  return { sections, omitted, memoryError };
}
