import { hooksAt } from "../../hooks/chain";
import type { Assembled, AssemblyDraft } from "./assemble";

/**
 * The `turn.end` hooks (docs/hooks.md): once the turn is stored, each hears of it in a notification (no answer is
 * awaited, so none can slow the turn; an app that is not connected misses it). Not in the stored evidence: it follows it.
 */
export async function notifyTurnEnd(d: AssemblyDraft & Assembled): Promise<void> {
  const hooks = hooksAt(d.hooks.hooks, "turn.end");
  if (hooks.length === 0) return;
  const payload = {
    continuation: d.continuation,
    toolCalls: d.toolRun.ran.map((r) => ({ id: r.toolCallId, tool: r.servedBy, outcome: r.outcome })),
    tokens: d.result.usage.total,
  };
  await Promise.all(hooks.map((hook) => d.deps.hub.notifyHook(hook, { hook: hook.name, point: "turn.end", conversationId: d.deps.meta.conversationId, turnId: d.turnId, agent: d.agent.id, payload })));
}
