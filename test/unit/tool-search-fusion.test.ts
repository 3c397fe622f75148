import { describe, expect, it } from "vitest";
import type { CatalogHit, CatalogTool } from "../../src/tools/catalog-search";
import { embeddingText, fuseRankings, rankByCosine, unitVector } from "../../src/tools/semantic-search";
import { FAKE_DIMENSIONS, fakeEmbedding } from "../fixtures/fake-embedding";

const hit = (name: string, exact = false, coverage = 0): CatalogHit => ({ name, score: 1, exact, coverage });
const lexical = (...names: string[]) => names.map((name) => hit(name));
const semantic = (...names: string[]) => names.map((name, i) => ({ name, score: 1 - i / 100 }));
const names = (hits: readonly CatalogHit[]) => hits.map((h) => h.name);

describe("fuseRankings", () => {
  /** Lexical hits with these scores (the first the best), all with the same coverage. */
  const scored = (coverage: number, ...hits: [string, number][]) => hits.map(([name, score]) => ({ name, score, exact: false, coverage }));
  const cosines = (...hits: [string, number][]) => hits.map(([name, score]) => ({ name, score }));

  it("scores each tool its lexical score over the best plus w times its cosine over the best, w the unread share squared", () => {
    // Half the query read: w = 0.25.
    const fused = fuseRankings(scored(0.5, ["a:first", 10], ["a:second", 9], ["a:third", 5]), cosines(["a:third", 0.8], ["b:only_semantic", 0.6], ["a:first", 0.2]), 10);
    expect(fused.map((h) => [h.name, h.score])).toEqual([
      ["a:first", 1 + 0.25 * 0.25],
      ["a:second", 0.9],
      ["a:third", 0.5 + 0.25],
      ["b:only_semantic", 0.25 * 0.75],
    ]);
    expect(fused.every((h) => !h.exact)).toBe(true);
  });

  it("keeps the order of a query the lexical ranker read whole, and lets meaning rank one it could not read", () => {
    const lex = (coverage: number) => scored(coverage, ["a:first", 3], ["a:second", 2.9], ["a:third", 2.85]);
    const sem = cosines(["a:third", 0.9], ["a:second", 0.5], ["b:other", 0.4]);
    expect(names(fuseRankings(lex(1), sem, 10))).toEqual(["a:first", "a:second", "a:third", "b:other"]);
    // Read mostly (w = 0.04): the first's lead of 5 % holds against a semantic first place; the third's 1.7 % gap to
    // the second (0.95 + 0.04 against 0.967 + 0.022) does not.
    expect(names(fuseRankings(lex(0.8), sem, 10)).slice(0, 3)).toEqual(["a:first", "a:third", "a:second"]);
    // Not read at all: both count alike, and the tool both place well comes first.
    expect(names(fuseRankings(lex(0), sem, 10))[0]).toBe("a:third");
    // What only the semantic ranker found, weighed at nothing, keeps its order after the lexical hits.
    expect(names(fuseRankings([hit("github:create_issue", false, 1)], semantic("zendesk:open_ticket", "jira:create_issue", "alpha:noop"), 10))).toEqual(["github:create_issue", "zendesk:open_ticket", "jira:create_issue", "alpha:noop"]);
  });

  it("counts a similarity only by how far it rises above the twentieth's, when the catalog had more tools to read", () => {
    const full = Array.from({ length: 20 }, (_, i): [string, number] => [`s:${String(i).padStart(2, "0")}`, 0.5 - i / 100]);
    // Nothing read (w = 1): the best scores (0.5 - 0.31) / 0.5, the twentieth nothing.
    const fused = fuseRankings([], cosines(...full), 20);
    expect(fused[0]!.score).toBeCloseTo(0.38, 6);
    expect(fused[19]!.score).toBe(0);
    // Half the query read (w = 0.25): a semantic ranking whose best barely clears its twentieth barely moves the
    // lexical order, and the first's 2 % lead holds.
    const flat = full.map(([name], i): [string, number] => [name, 0.4 - i / 1000]);
    const lex = scored(0.5, ["a:first", 1], ["s:00", 0.98]);
    expect(names(fuseRankings(lex, cosines(...flat), 5))[0]).toBe("a:first");
    // The same similarities in a catalog of fewer tools than the list's depth count from zero, and move it.
    expect(names(fuseRankings(lex, cosines(...flat.slice(0, 5)), 5))[0]).toBe("s:00");
  });

  it("counts a negative cosine as nothing, and a semantic ranking whose best is not positive not at all", () => {
    const lex = scored(0, ["a:one", 2], ["a:two", 1]);
    expect(fuseRankings(lex, cosines(["a:two", -0.5], ["b:x", -0.9]), 10).map((h) => [h.name, h.score])).toEqual([["a:one", 1], ["a:two", 0.5], ["b:x", 0]]);
    // The best positive: a negative one beside it adds nothing, not a negative share.
    expect(fuseRankings(lex, cosines(["b:x", 0.5], ["a:one", -0.5]), 10).map((h) => [h.name, h.score])).toEqual([["a:one", 1], ["b:x", 1], ["a:two", 0.5]]);
    // A similarity that is not a number ranks nothing and hides nothing.
    expect(fuseRankings(lex, cosines(["b:nan", Number.NaN], ["b:x", 0.5]), 10).map((h) => [h.name, h.score])).toEqual([["a:one", 1], ["b:x", 1], ["a:two", 0.5]]);
  });

  it("weighs meaning by the first hit that is not an exact name, whatever the exact hits' coverage", () => {
    const lex = [{ ...hit("a:exact", true), coverage: 1 }, ...scored(0, ["a:one", 2], ["a:two", 1])];
    // The first hit that is not exact read none of the query: meaning weighs as much as the lexical ranking.
    expect(names(fuseRankings(lex, cosines(["a:two", 1]), 10))).toEqual(["a:exact", "a:two", "a:one"]);
  });

  it("keeps exact-name hits first, in the lexical order, whatever the semantic ranking says, and lists them once", () => {
    const lex = [hit("cal:list_events", true), hit("files:list_events", true), ...lexical("cal:create_event", "cal:delete_event")];
    const fused = fuseRankings(lex, semantic("mail:send", "files:list_events", "cal:delete_event"), 5);
    expect(fused.slice(0, 2)).toEqual([hit("cal:list_events", true), hit("files:list_events", true)]);
    expect(names(fused)).toEqual(["cal:list_events", "files:list_events", "cal:delete_event", "cal:create_event", "mail:send"]);
  });

  it("breaks equal scores by the lexical rank, then the semantic rank, then by name: the same lists always fuse the same way", () => {
    // b and a score the same lexically (b listed first) and semantically: the lexical ranker decides.
    expect(names(fuseRankings(lexical("x:b", "x:a"), semantic("x:a", "x:b").map((h) => ({ ...h, score: 1 })), 5))).toEqual(["x:b", "x:a"]);
    expect(names(fuseRankings([], cosines(["x:z", 1], ["x:c", 1]), 5))).toEqual(["x:z", "x:c"]);
    const tie = fuseRankings(lexical("x:m"), cosines(["x:c", 1]), 5);
    expect(tie[0]!.score).toBe(tie[1]!.score);
    expect(names(tie)).toEqual(["x:m", "x:c"]);
  });

  it("without a semantic ranking keeps the lexical order; without lexical hits follows the semantic one", () => {
    const lex = [hit("a:exact", true), ...scored(0.5, ["a:one", 4], ["a:two", 2], ["a:three", 1])];
    expect(fuseRankings(lex, [], 10)).toEqual([lex[0], ...scored(0.5, ["a:one", 1], ["a:two", 0.5], ["a:three", 0.25])]);
    expect(names(fuseRankings([], semantic("b:1", "b:2", "b:3"), 10))).toEqual(["b:1", "b:2", "b:3"]);
  });

  it("answers at most `limit` hits and reads each list only 20 deep", () => {
    const many = Array.from({ length: 30 }, (_, i) => `t:${String(i).padStart(2, "0")}`);
    expect(fuseRankings(lexical(...many), semantic(...many), 7)).toHaveLength(7);
    const deep = fuseRankings(lexical(...many), [], 30);
    expect(names(deep)).toEqual(many.slice(0, 20));
    expect(names(fuseRankings([], semantic(...many), 30))).toEqual(many.slice(0, 20));
  });
});

describe("rankByCosine", () => {
  const v = (...values: number[]) => unitVector(values);

  it("ranks by cosine similarity, best first, ties by name, and skips a vector of another model's length", () => {
    const vectors = new Map([
      ["t:far", v(0, 1, 0)],
      ["t:near", v(1, 0.1, 0)],
      ["t:same_b", v(1, 0, 0)],
      ["t:same_a", v(2, 0, 0)],
      ["t:other_model", v(1, 0)],
    ]);
    const hits = rankByCosine(v(1, 0, 0), vectors);
    expect(hits.map((h) => h.name)).toEqual(["t:same_a", "t:same_b", "t:near", "t:far"]);
    expect(hits[0]!.score).toBeCloseTo(1, 6);
    expect(hits[3]!.score).toBeCloseTo(0, 6);
    expect(rankByCosine(v(1, 0, 0), vectors, 2)).toHaveLength(2);
  });

  it("leaves a zero vector at zero instead of dividing by nothing", () => {
    expect([...unitVector([0, 0, 0])]).toEqual([0, 0, 0]);
  });
});

describe("embeddingText", () => {
  const tool: CatalogTool = {
    name: "calendar:createEvent",
    description: "Create an event on the user's calendar.",
    inputSchema: {
      type: "object",
      properties: {
        title: { type: "string", description: "What the event is called." },
        kind: { type: "string", enum: ["meeting", "call", "focus_time"] },
        attendees: { type: "array", items: { type: "object", properties: { email: { type: "string", description: "An attendee's address." } } } },
      },
    },
  };

  it("embeds the name in words, the description, and each parameter's description and allowed values, nested ones too", () => {
    expect(embeddingText(tool)).toBe(
      ["calendar create Event", "Create an event on the user's calendar.", "title: What the event is called.", "kind (one of: meeting, call, focus_time)", "attendees", "attendees email: An attendee's address."].join("\n"),
    );
  });

  it("changes when a parameter's description or allowed values change, so the tool is embedded again", () => {
    const changed = { ...tool, inputSchema: { ...tool.inputSchema, properties: { kind: { type: "string", enum: ["meeting"] } } } };
    expect(embeddingText(changed)).not.toBe(embeddingText(tool));
  });

  it("stays within 2,000 characters whatever the schema holds", () => {
    const properties = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`p${i}`, { type: "string", description: "a long description ".repeat(5) }]));
    expect(embeddingText({ ...tool, inputSchema: { type: "object", properties } }).length).toBe(2000);
  });
});

describe("the fake embedding (the workerd tests' stand-in for bge-m3)", () => {
  it("is deterministic, 1024 dimensions and unit length, and closer for texts that share words and spellings", () => {
    const a = fakeEmbedding("send an email to Sam");
    expect(a).toEqual(fakeEmbedding("send an email to Sam"));
    expect(a).toHaveLength(FAKE_DIMENSIONS);
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    const cosine = (x: string, y: string) => rankByCosine(unitVector(fakeEmbedding(x)), new Map([["t:y", unitVector(fakeEmbedding(y))]]))[0]!.score;
    expect(cosine("send an emial", "mail send message: Send an email message")).toBeGreaterThan(cosine("send an emial", "calendar delete event: Delete an event"));
  });
});
