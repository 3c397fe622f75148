import { indexBody, indexedText, matchExpression, queryTerms, rankHits, SEARCH_HISTORY, type HistorySearchAnswer, type QueryTerm, type SearchableMessage } from "../history/search";
import type { Database, Row } from "../storage/database";
import { numeric, numericOrNull, json, text, textOrNull } from "../storage/decode";
import { ToolCalls } from "./columns";

/**
 * Whether the conversation offers search_history: from the first turn to an agent that asks (`searchHistory: true`),
 * to every other from the first summary or clear on, for good, so the tool list (which providers cache) changes once,
 * at a compaction or a clear, when the prefix changes anyway.
 */
export function offersHistorySearch(agent: { searchHistory?: boolean | undefined }, everCovered: boolean): boolean {
  return agent.searchHistory === true || everCovered;
}

/**
 * Messages one search reads: the best by bm25, whose text the re-ranking and the excerpts read. More than a call may
 * list (LIMITS.historySearchHits), so the re-ranking has some to choose from.
 */
const CANDIDATES = 24;
/** Messages the migration's backfill reads at a time. */
const BATCH = 500;

/**
 * search_history's index over the conversation's stored messages (migration 0017): an FTS5 table keyed by message
 * seq, contentless, so the text stays in `messages` only and an excerpt is cut from there. It is appended to in the
 * transaction that stores each message; a search reads the index and a few candidate rows, never the whole history.
 */
export class HistorySearchStore {
  /** It never needs a transaction of its own: it writes in the one that stores the message. */
  constructor(private readonly sql: Pick<Database, "exec">) {}

  /** Indexes one stored message: nothing when it has no words, or is a search_history call's result. */
  add(seq: number, message: SearchableMessage & { toolCallId?: string | null }): void {
    const answersSearch = message.role === "tool" && this.answersSearch(seq, message.toolCallId ?? "");
    const text = indexedText(message, answersSearch);
    if (text.trim() !== "") this.sql.exec("INSERT INTO history_search (rowid, body) VALUES (?, ?)", seq, indexBody(text));
  }

  /** The stored messages that best match `query`, at most `limit`, best first, each with an excerpt. */
  search(query: string, limit: number): HistorySearchAnswer {
    const terms = queryTerms(query);
    if (terms.length === 0) return { terms, hits: [] };
    const ranked = [
      ...this.sql.exec("SELECT rowid AS seq, bm25(history_search) AS score FROM history_search WHERE history_search MATCH ? ORDER BY score LIMIT ?", matchExpression(terms), CANDIDATES),
    ];
    if (ranked.length === 0) return { terms, hits: [] };
    const scores = new Map(ranked.map((r) => [numeric(r, "seq"), numeric(r, "score")]));
    const rows = this.sql.exec(`SELECT seq, role, content, tool_calls, created_at FROM messages WHERE seq IN (${ranked.map(() => "?").join(", ")})`, ...scores.keys());
    const candidates = [...rows].map((row) => ({
      seq: numeric(row, "seq"),
      role: text(row, "role"),
      createdAt: text(row, "created_at"),
      text: indexedText(searchable(row)),
      score: scores.get(numeric(row, "seq"))!,
    }));
    return { terms, hits: rankHits(query, terms, candidates, limit, this.rarity(terms)) };
  }

  /**
   * How rare each term is in this conversation: the log of the messages over those that hold it (one index lookup a
   * term, at most 16), so a name said once outweighs words said in every other message.
   */
  private rarity(terms: readonly QueryTerm[]): Map<string, number> {
    const messages = numericOrNull(this.sql.exec("SELECT MAX(seq) AS n FROM messages").one(), "n") ?? 0;
    const rarity = new Map<string, number>();
    for (const term of terms) {
      const holding = numeric(this.sql.exec("SELECT count(*) AS n FROM history_search WHERE history_search MATCH ?", matchExpression([term])).one(), "n");
      rarity.set(term.stem, Math.log(1 + messages / (holding + 0.5)));
    }
    return rarity;
  }

  /** Migration 0017's step: every message stored before the index existed, in order, a batch at a time. */
  backfill(): void {
    for (let after = 0; ; ) {
      const rows = this.sql.exec("SELECT seq, role, content, tool_calls, tool_call_id FROM messages WHERE seq > ? ORDER BY seq LIMIT ?", after, BATCH).toArray();
      if (rows.length === 0) return;
      for (const row of rows) this.add(numeric(row, "seq"), { ...searchable(row), toolCallId: textOrNull(row, "tool_call_id") });
      after = numeric(rows.at(-1)!, "seq");
    }
  }

  /** Whether the tool result stored at `seq` answers a search_history call: its call is among the latest stored before it. */
  private answersSearch(seq: number, toolCallId: string): boolean {
    const [made] = this.sql.exec("SELECT tool_calls FROM messages WHERE tool_calls IS NOT NULL AND seq < ? ORDER BY seq DESC LIMIT 1", seq).toArray();
    const calls = made ? json(ToolCalls, made, "tool_calls") : [];
    return calls.some((c) => c.id === toolCallId && c.function.name === SEARCH_HISTORY);
  }
}

function searchable(row: Row): SearchableMessage {
  return { role: text(row, "role"), content: textOrNull(row, "content"), toolCalls: row.tool_calls ? json(ToolCalls, row, "tool_calls") : null };
}
