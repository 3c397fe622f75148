/**
 * Events renamed to the dotted style (docs/evidence.md, "Renamed events"): rows a conversation stored under the former
 * names read back under the new ones, and every such event names its former type for one version.
 */
import { describe, expect, it } from "vitest";
import { memoryDatabase } from "./support/node-sql";

const AT = "2026-11-01T09:00:00.000Z";

describe("renamed event types", () => {
  it("read rows stored under the former names back under the new ones, with `formerly`", () => {
    const { db } = memoryDatabase();
    // As the runtime stored them before the rename, then after it, then an event that was never renamed.
    db.events.add("t-1", "context:pre_compact", "1", { messageCount: 9, tokens: 900 }, AT);
    db.events.add("t-1", "context:post_compact", "1", { messageCount: 9, tokens: 300 }, AT);
    db.events.add("t-1", "context:include", null, { messageCount: 10, tokens: 320, sources: [] }, AT);
    db.events.add("t-2", "context.include", null, { messageCount: 12, tokens: 340, sources: [] }, AT);
    db.events.add("t-2", "turn.assembled", "notes", {}, AT);

    const page = db.events.page(0, 10);
    expect(page.map((e) => [e.type, e.formerly])).toEqual([
      ["context.pre_compact", "context:pre_compact"],
      ["context.post_compact", "context:post_compact"],
      ["context.include", "context:include"],
      ["context.include", "context:include"],
      ["turn.assembled", undefined],
    ]);
    expect("formerly" in page[4]!).toBe(false);
    expect(page[0]!.data).toEqual({ messageCount: 9, tokens: 900 });
  });
});
