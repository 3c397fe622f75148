import { renderNotShown } from "../../core/assemble";
import type { ChatMessage } from "../../protocol/messages";
import type { TurnResult } from "../../protocol/frontend";
import type { TurnRecord } from "../store";
import type { StoredTurnResult } from "./options";
import type { ConversationScope } from "../scope";
import type { History } from "../history";

/**
 * The answer stored for `prior`: its result, and exactly what its model input held (summary, stubs and stand-ins as
 * they were). An empty stored view is a record written before views were stored (migration 0002's default), which
 * read the whole history through its message, unless its usage says it read no stored message at all.
 */
export function replay(scope: Pick<ConversationScope, "db" | "meta">, history: History, prior: TurnRecord): TurnResult {
  const stored = JSON.parse(prior.result) as StoredTurnResult;
  const legacy = prior.historyView.length === 0 && stored.usage.history + stored.usage.message > 0;
  const ranges = legacy ? [[1, prior.userSeq] as [number, number]] : prior.historyView;
  const overlay = history.overlayAsOf(prior.compactionId);
  const read = ranges.flatMap(([from, to]) => scope.db.messages.list(to, Math.max(from, 1)));
  // The turn's own message kept all its images; the history before it shows those after the image boundary of the
  // compaction the turn was built on (a turn stored before boundaries: its `earlierImages`).
  const own = stored.usage.message > 0 ? read.pop()! : null;
  const view = { ...overlay, summary: ranges[0]?.[0] === 0 ? overlay.summary : null, stored: read };
  const { history: shownHistory, seqs } = history.render(view, new Date(stored.envelope.createdAt), stored.envelope.history?.earlierImages);
  const notShown = new Map((stored.envelope.tools?.notShown ?? []).map((n) => [n.seq, n]));
  const shown = shownHistory.map((m, i): ChatMessage => {
    const standIn = notShown.get(seqs[i]!);
    return standIn && m.role === "tool" ? { role: "tool", tool_call_id: m.tool_call_id, content: renderNotShown(standIn.tool, standIn.tokens, scope.meta.nonce) } : m;
  });
  return { ...stored, messages: [{ role: "system", content: prior.systemPrompt }, ...shown, ...(own ? [own.message] : [])], replayed: true };
}
