import { hooksAt } from "../../hooks/chain";
import type { Assembled } from "./assemble";
import type { AssemblyDraft } from "./view-assembly";

/**
 * The `turn.end` hooks (docs/hooks.md): once the turn is stored, each hears of it in a notification. Sent without
 * waiting (the turn is answered meanwhile, and a failure to send changes nothing of it); an app that is not connected
 * misses it. Not in the stored evidence: it follows it.
 */
export function notifyTurnEnd(d: AssemblyDraft & Assembled): void {
  const hooks = hooksAt(d.hooks.hooks, "turn.end");
  if (hooks.length === 0) return;
  const payload = {
    continuation: d.continuation,
    toolCalls: d.toolRun.ran.map((r) => ({ id: r.toolCallId, tool: r.servedBy, outcome: r.outcome })),
    tokens: d.result.usage.total,
  };
  const sent = hooks.map((hook) => d.scope.apps.notifyHook(hook, { hook: hook.name, point: "turn.end", conversationId: d.scope.meta.conversationId, turnId: d.turnId, agent: d.agent.id, payload }));
  Promise.all(sent).catch((error: unknown) => console.error("turn.end notification failed", error instanceof Error ? error.message : String(error)));
}
