import * as z from "zod";
import type { ContextEvent, UsageReport } from "../protocol/frontend";
import type { Database } from "../storage/database";
import { decodeRow, json, jsonText, text } from "../storage/decode";
import { EventData, UsageData } from "./columns";

const GatewaySteps = z.object({ turnIds: z.array(z.string()) });

const EventRow = z.object({
  seq: z.number(),
  turn_id: z.string().nullable(),
  type: z.string(),
  subject: z.string().nullable(),
  data: jsonText(EventData),
  at: z.string(),
});

/**
 * Event types renamed to the one dotted style, by their former names. Rows stored before the rename read back renamed,
 * and each such event names its former type in `formerly`, for one version (docs/evidence.md, "Renamed events").
 */
const RENAMED = new Map([
  ["context:include", "context.include"],
  ["context:pre_compact", "context.pre_compact"],
  ["context:post_compact", "context.post_compact"],
]);
const FORMERLY = new Map([...RENAMED].map(([former, now]) => [now, former]));

/** The conversation's context events (`events`), oldest first: what happened, for frontends and for later turns. */
export class EventStore {
  constructor(private readonly sql: Database) {}

  add(turnId: string | null, type: string, subject: string | null, data: Record<string, unknown>, at: string): void {
    this.sql.exec("INSERT INTO events (turn_id, type, subject, data, at) VALUES (?, ?, ?, ?, ?)", turnId, type, subject, JSON.stringify(data), at);
  }

  /** The latest `reminder.fired` event's reason among those of this kind that `matches` accepts, newest first; null when none. */
  lastReminderReason(kind: string, matches: (reason: string) => boolean): string | null {
    for (const r of this.sql.exec("SELECT data FROM events WHERE type = 'reminder.fired' AND subject = ? ORDER BY seq DESC", kind)) {
      const reason = json(EventData, r, "data").reason;
      if (typeof reason === "string" && matches(reason)) return reason;
    }
    return null;
  }

  /**
   * The corrective notes continuations fired since the user message at `userSeq` (`kind\0reason`): the next user
   * message does not note the same again.
   */
  continuationReminders(userSeq: number): Set<string> {
    const rows = this.sql.exec(
      "SELECT subject, data FROM events WHERE type = 'reminder.fired' AND json_extract(data, '$.continuation') = 1 AND json_extract(data, '$.userSeq') = ?",
      userSeq,
    );
    return new Set(rows.toArray().map((r) => `${text(r, "subject")}\u0000${String(json(EventData, r, "data").reason)}`));
  }

  page(after: number, limit: number): ContextEvent[] {
    return this.sql
      .exec("SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?", after, limit)
      .toArray()
      .map((r) => {
        const e = decodeRow(EventRow, r, "events");
        const type = RENAMED.get(e.type) ?? e.type;
        const formerly = FORMERLY.get(type);
        return { seq: e.seq, turnId: e.turn_id, type, ...(formerly ? { formerly } : {}), subject: e.subject, data: e.data, at: e.at };
      });
  }

  /** The model usage reported for a turn (`model.usage`), oldest first. */
  usageOf(turnId: string): UsageReport[] {
    return this.sql
      .exec("SELECT data, at FROM events WHERE turn_id = ? AND type = 'model.usage' ORDER BY seq", turnId)
      .toArray()
      .map((e) => ({ ...json(UsageData, e, "data"), at: text(e, "at") }));
  }

  /** Every step's turn of the gateway request whose first turn this is (`gateway.steps`); null for any other turn. */
  gatewayStepsOf(turnId: string): string[] | null {
    // By type and subject (the first turn's id), as events_by_type indexes them.
    const row = this.sql.exec("SELECT data FROM events WHERE type = 'gateway.steps' AND subject = ? ORDER BY seq DESC LIMIT 1", turnId).toArray()[0];
    return row ? GatewaySteps.parse(json(EventData, row, "data")).turnIds : null;
  }
}
