import { describe, expect, it } from "vitest";
import { digest, digestSummariser } from "../../src/history/digest";
import type { SummaryInputMessage, SummaryRequest } from "../../src/history/summary";
import { countTokens } from "../../src/core/tokens";
import { seededRandom } from "../fixtures/seeded-random";

const CORRECTIONS = new Map([
  [23, "Actually the deadline is Friday the 14th, not Thursday."],
  [71, "No, I meant the Lisbon office rather than the Porto one."],
  [130, "Correction: the budget cap is 4,200 euros per quarter."],
  [181, "That's wrong, the client is called Meridian Freight."],
]);
const QUOTES = new Map([
  [41, '"Quarterly Harbour Review — Draft 2"'],
  [98, "\u201cKeep it short and kind\u201d"],
  [146, "`npm run build:docs`"],
  [164, "\u00able d\u00e9lai est vendredi\u00bb"],
]);

const NOUNS = ["harbour", "schedule", "crane", "ledger", "manifest", "berth", "pallet", "route", "invoice", "convoy"];
const ADJECTIVES = ["busy", "quiet", "late", "early", "steady", "long", "short", "new"];

/** A user, assistant, tool cycle of filler chatter, with planted user sentences at fixed seqs. */
function history(count: number, plants: ReadonlyMap<number, string> = new Map([...CORRECTIONS, ...QUOTES].map(([seq, s]) => [seq, plantIn(s)]))): SummaryInputMessage[] {
  const random = seededRandom(7);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  return Array.from({ length: count }, (_, i): SummaryInputMessage => {
    const seq = i + 1;
    const createdAt = new Date(Date.UTC(2026, 10, 1, 0, seq)).toISOString();
    const filler = `I looked at the ${pick(NOUNS)} ${pick(NOUNS)} this morning. It seems ${pick(ADJECTIVES)}.`;
    const planted = plants.get(seq);
    if (planted) return { seq, role: "user", content: `${filler} ${planted}`, createdAt };
    if (seq % 3 === 1) return { seq, role: "user", content: filler, createdAt };
    if (seq % 3 === 2) {
      return { seq, role: "assistant", content: `The ${pick(NOUNS)} looks ${pick(ADJECTIVES)}.`, toolCalls: [{ name: "lookup", arguments: `{"q":"${pick(NOUNS)}"}` }], createdAt };
    }
    const rows = Array.from({ length: 60 }, () => ({ item: pick(NOUNS), state: pick(ADJECTIVES), weight: Math.floor(random() * 10_000) }));
    return { seq, role: "tool", toolName: "lookup", content: JSON.stringify(rows), createdAt };
  });
}

function plantIn(planted: string): string {
  return planted.startsWith("`") ? `Then run ${planted} again.` : planted.startsWith("\u00ab") ? `She wrote ${planted} in the memo.` : planted.match(/^["\u201c]/) ? `Title it ${planted} for now.` : planted;
}

const request = (messages: SummaryInputMessage[], maxTokens: number, previous: SummaryRequest["previous"] = null): SummaryRequest => ({ previous, messages, maxTokens });
const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe("digest summariser", () => {
  it("keeps planted corrections and quoted wording verbatim among filler and big tool results", async () => {
    const messages = history(200);
    expect(messages.filter((m) => m.role === "tool").reduce((sum, m) => sum + countTokens(m.content), 0)).toBeGreaterThan(30_000);
    const draft = await digestSummariser.summarise(request(messages, 1_500));
    expect(digestSummariser.name).toBe("digest");
    expect(countTokens(draft.text)).toBeLessThanOrEqual(1_500);
    for (const [seq, correction] of CORRECTIONS) expect(draft.text).toContain(`- [#${seq}] ${correction}`);
    for (const [seq, quote] of QUOTES) expect(draft.text).toContain(`- [#${seq}] ${quote}`);
    expect(draft.text.split("\n")[0]).toBe("Summary of messages #1–#200 (digest; exact quotes and corrections verbatim).");
  });

  it("updates a previous digest instead of stacking on it", () => {
    const repeated = "Actually the deadline is Friday the 14th, not Thursday.";
    const messages = history(100, new Map([[23, repeated], [40, "Stop sending the drafts to Porto."], [61, repeated], [88, "I said the Lisbon office."]]));
    const a = digest(request(messages.slice(0, 50), 800));
    const b = digest(request(messages.slice(50), 800, { text: a.text, summariser: "digest", state: a.state }));
    expect(b.text.split("\n")[0]).toBe("Summary of messages #1–#100 (digest; exact quotes and corrections verbatim).");
    expect(b.text).toContain("- [#40] Stop sending the drafts to Porto.");
    expect(b.text).toContain("- [#88] I said the Lisbon office.");
    expect(occurrences(b.text, repeated)).toBe(1);
    expect(b.text).not.toContain("Earlier summary");
    // The unkept counts run over both digests' messages.
    const [replies, results] = [messages.filter((m) => m.role === "assistant").length, messages.filter((m) => m.role === "tool").length];
    expect(b.loss.at(-1)).toMatch(new RegExp(`^${replies} assistant replies and ${results} tool results`));
    // The state is plain JSON, and re-reading it with nothing new reproduces the text.
    expect(JSON.parse(JSON.stringify(b.state))).toEqual(b.state);
    expect(digest(request([], 800, { text: b.text, summariser: "digest", state: JSON.parse(JSON.stringify(b.state)) })).text).toBe(b.text);
  });

  it("carries another summariser's text as the earlier summary", () => {
    const previous = { text: "The user ships from Oslo.\nThey prefer metric units.", summariser: "model:gpt-test-mini", state: null };
    const draft = digest(request(history(30).slice(20), 600, previous));
    const lines = draft.text.split("\n");
    expect(lines[0]).toBe("Summary of earlier history and messages #21–#30 (digest; exact quotes and corrections verbatim).");
    expect(lines.slice(1, 4)).toEqual(["Earlier summary:", "The user ships from Oslo.", "They prefer metric units."]);
    // Carried on through the next update, once.
    const next = digest(request(history(40).slice(30), 600, { text: draft.text, summariser: "digest", state: draft.state }));
    expect(occurrences(next.text, "The user ships from Oslo.\nThey prefer metric units.")).toBe(1);
    // Cut to fit when it is long.
    const long = { ...previous, text: Array.from({ length: 200 }, (_, i) => `Line ${i} of an older summary.`).join("\n") };
    const cut = digest(request([], 100, long));
    expect(countTokens(cut.text)).toBeLessThanOrEqual(100);
    expect(cut.text).toContain("Line 0 of an older summary.");
    expect(cut.loss).toContain("the earlier summary was cut to fit");
  });

  it("lists files, URLs, artifact pointers and tools once each, with where they were mentioned", () => {
    const at = "2026-11-01T00:00:00Z";
    const messages: SummaryInputMessage[] = [
      { seq: 1, role: "user", content: "Look at src/app.ts and report.pdf, e.g. the intro and/or the end.", createdAt: at },
      { seq: 2, role: "assistant", content: "", toolCalls: [{ name: "read_file", arguments: '{"path":"./docs/a.md"}' }], createdAt: at },
      { seq: 3, role: "tool", toolName: "read_file", content: "See https://example.com/guide?x=1. Imports src/app.ts.", createdAt: at },
      { seq: 4, role: "assistant", content: "Saved to r2://artifacts/t1/c9/report.json, see /etc/hosts.", toolCalls: [{ name: "read_file", arguments: '{"path":"src/app.ts"}' }], createdAt: at },
      { seq: 5, role: "user", content: "And src/app.ts again, plus https://example.com/guide?x=1", createdAt: at },
    ];
    const { text } = digest(request(messages, 2_000));
    const files = text.slice(text.indexOf("Files and artifacts:"), text.indexOf("Timeline:")).trim().split("\n").slice(1);
    expect(files).toEqual([
      "- src/app.ts (#1, #3, #5)",
      "- report.pdf (#1)",
      "- ./docs/a.md (#2)",
      "- tool: read_file (#2, #3, #4)",
      "- https://example.com/guide?x=1 (#3, #5)",
      "- r2://artifacts/t1/c9/report.json (#4)",
      "- /etc/hosts (#4)",
    ]);
  });

  it("keeps a tool call the user denied as their decision, and never takes tool output for one", () => {
    const at = "2026-11-01T00:00:00Z";
    const denial = "[not run: the user denied this tool call] Their reason: not the drafts, they are mine.";
    const messages: SummaryInputMessage[] = [
      { seq: 1, role: "user", content: "Tidy up the workspace.", createdAt: at },
      { seq: 2, role: "assistant", content: "", toolCalls: [{ name: "delete_file", arguments: '{"path":"drafts/a.md"}' }, { name: "search", arguments: "{}" }], createdAt: at },
      { seq: 3, role: "tool", toolName: "delete_file", content: denial, denied: { reason: "not the drafts,\n they are mine." }, createdAt: at },
      { seq: 4, role: "tool", toolName: "search", content: denial, createdAt: at },
    ];
    const { text, state } = digest(request(messages, 2_000));
    const decisions = text.slice(text.indexOf("Decisions:"), text.indexOf("Files and artifacts:")).trim().split("\n").slice(1);
    expect(decisions).toEqual(["- [#3 user] denied running delete_file: not the drafts, they are mine."]);
    expect((state as { unkept: { tool: number } }).unkept.tool).toBe(1);
  });

  it("fits every budget, drops the timeline first and corrections last, and says what it dropped", () => {
    const messages = history(200);
    const replies = messages.filter((m) => m.role === "assistant").length;
    const results = messages.filter((m) => m.role === "tool").length;
    const unkeptTokens = messages
      .filter((m) => m.role !== "user")
      .reduce((sum, m) => sum + countTokens(m.content) + (m.toolCalls ?? []).reduce((args, call) => args + countTokens(call.arguments), 0), 0)
      .toLocaleString("en-US");
    for (const maxTokens of [50, 120, 400, 2_000]) {
      const draft = digest(request(messages, maxTokens));
      expect(countTokens(draft.text)).toBeLessThanOrEqual(maxTokens);
      expect(draft.loss.at(-1)).toBe(`${replies} assistant replies and ${results} tool results (${unkeptTokens} tokens) are not kept beyond the lines above`);
      const kept = draft.text.split("\n").slice(1);
      // Sections give way in order: once a kind lost anything, every kind before it in the order is gone.
      const order = ["Timeline", "Files and artifacts", "Open tasks", "Decisions", "Exact wording", "Corrections the user made"];
      const lossNames = ["timeline line", "file and tool line", "older open task", "older decision", "older exact quote", "older correction"];
      lossNames.forEach((name, i) => {
        if (draft.loss.some((line) => line.includes(name))) for (const heading of order.slice(0, i)) expect(kept).not.toContain(`${heading}:`);
      });
      if (maxTokens <= 120) expect(draft.loss).toContainEqual(expect.stringMatching(/^\d+ timeline lines dropped \(messages #1–#\d+\)$/));
      if (maxTokens >= 400) for (const correction of CORRECTIONS.values()) expect(draft.text).toContain(correction);
      if (maxTokens === 2_000) expect(draft.loss.some((line) => line.includes("corrections") || line.includes("quotes"))).toBe(false);
      // What the text does not show, the state does not keep.
      const state = draft.state as { items: Record<string, unknown[]> };
      const bullets = kept.filter((line) => line.startsWith("- ")).length;
      expect(Object.values(state.items).reduce((sum, items) => sum + items.length, 0)).toBe(bullets);
    }
    // With room for little, that little is the newest correction.
    const tiny = digest(request(messages, 50));
    expect(tiny.text.split("\n").slice(1)).toEqual(["Corrections the user made:", `- [#181] ${CORRECTIONS.get(181)}`]);
    expect(tiny.loss).toContainEqual(expect.stringMatching(/^3 older corrections dropped \(messages #23–#130\)$/));
  });

  it("is deterministic", async () => {
    const messages = history(120);
    const first = await digestSummariser.summarise(request(messages, 700));
    const second = await digestSummariser.summarise(request(structuredClone(messages), 700));
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });

  it("treats a malformed previous state as another summariser's text, without throwing", () => {
    const messages = history(10);
    for (const state of [{ corrections: 5 }, null, 7, "x", [], { version: 1, items: null }]) {
      const draft = digest(request(messages, 400, { text: "Older notes.", summariser: "digest", state }));
      expect(draft.text).toContain("Earlier summary:\nOlder notes.");
    }
    const odd = { version: 1, from: "1", items: { corrections: [{ text: 5 }, { text: "Fine.", seqs: ["3"] }, null], files: { length: 2 } }, dropped: { timeline: { count: -1 } }, unkept: [] };
    const draft = digest(request(messages, 400, { text: "Older notes.", summariser: "digest", state: odd }));
    expect(draft.text.split("\n")[0]).toBe("Summary of messages #1–#10 (digest; exact quotes and corrections verbatim).");
    expect(draft.text).not.toContain("Fine.");
  });
});
