import { describe, expect, it } from "vitest";
import { digest, digestSummariser } from "../../src/history/digest";
import { userUnits } from "../../src/history/user-words";
import { ADVERSARIAL_INPUTS } from "../fixtures/adversarial-text";
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

const HEADER = "Summary of messages #1–#200 (digest: the user's words verbatim, oldest first).";
const USER_HEADING = "The user said, verbatim (\u2026 marks a cut):";
/** The lines of the user's words: from their heading to the next heading. */
function userLinesOf(text: string): string[] {
  const lines = text.split("\n");
  const start = lines.indexOf(USER_HEADING);
  if (start === -1) return [];
  const end = lines.findIndex((line, k) => k > start && !line.startsWith("- "));
  return lines.slice(start + 1, end === -1 ? undefined : end);
}
const at = "2026-11-01T00:00:00Z";
const said = (contents: readonly string[]): SummaryInputMessage[] => contents.map((content, k) => ({ seq: k + 1, role: "user", content, createdAt: at }));

describe("digest summariser", () => {
  it("keeps every user message verbatim while they fit, and nothing of the tool output", async () => {
    const messages = history(200);
    expect(messages.filter((m) => m.role === "tool").reduce((sum, m) => sum + countTokens(m.content), 0)).toBeGreaterThan(30_000);
    const draft = await digestSummariser.summarise(request(messages, 2_000));
    expect(digestSummariser.name).toBe("digest");
    expect(countTokens(draft.text)).toBeLessThanOrEqual(2_000);
    const lines = draft.text.split("\n");
    expect(lines.slice(0, 2)).toEqual([HEADER, USER_HEADING]);
    const users = messages.filter((m) => m.role === "user");
    expect(userLinesOf(draft.text)).toEqual(users.map((m) => `- [#${m.seq}] ${m.content}`));
    expect(draft.text).not.toContain("weight");
    expect(draft.loss.some((line) => line.includes("left out"))).toBe(false);
  });

  it("keeps the sentences that carry the user's facts, however phrased, and gives up repeats and small talk for them", () => {
    const facts = [
      "That's not right. The Heron release goes out on a Thursday, not a Tuesday.",
      "No wait, the venue is the Lisbon office.",
      "Sorry, I got that wrong: the kickoff is at 9:30.",
      "I misspoke earlier: Priya owns the QA pass.",
      "Decision: we ship the beta to 50 testers.",
      "OK, final call \u2014 we'll host it on Fly.io.",
      "Going forward, invoices go to billing@acme.io.",
      "keep this sentence verbatim: The harbour never sleeps.",
      "The budget is 4,200 euros per quarter.",
      "Cap uploads at 25 MB.",
      "Le d\u00e9lai est \u00ab vendredi 14 mars \u00bb, pas jeudi.",
      "Das Budget ist nicht 3000 sondern 3500 Euro.",
      "\u30ea\u30ea\u30fc\u30b9\u306f\u6728\u66dc\u65e5\u3067\u306f\u306a\u304f\u91d1\u66dc\u65e5\u3067\u3059\u3002",
    ];
    const filler = ["ok thanks", "sounds good", "great, go ahead", "nice"];
    const contents = facts.flatMap((fact, k) => [fact, filler[k % filler.length]!, filler[(k + 1) % filler.length]!]);
    const messages: SummaryInputMessage[] = said(contents).flatMap((m) => [
      { ...m, seq: m.seq * 2 - 1 },
      { seq: m.seq * 2, role: "assistant", content: "Noted. I will keep working on the plan and report back with the details shortly.", createdAt: at, toolCalls: [{ name: "notes_search", arguments: '{"q":"plan"}' }] },
    ]);
    const needed = countTokens(facts.map((f, k) => `- [#${k}] ${f}`).join("\n")) + 60;
    const draft = digest(request(messages, needed));
    expect(countTokens(draft.text)).toBeLessThanOrEqual(needed);
    for (const fact of facts) expect(draft.text).toContain(fact);
    // Said again and again, small talk is kept once at most.
    for (const f of filler) expect(occurrences(draft.text, `] ${f}`), f).toBeLessThanOrEqual(1);
    // What went is counted by kind, and can still be found.
    expect(draft.loss[0]).toMatch(/^\d+ of the user's sentences left out \(messages #\d+–#\d+\): \d+ repeated, \d+ small talk; search_history finds them$/);
    // The files and tools have what the user's words leave.
    expect(draft.loss).toContainEqual(expect.stringMatching(/^\d+ file and tool lines? dropped/));
  });

  it("keeps a correction with the sentences around it that say what it corrects", () => {
    const messages = said([
      "The Heron release.",
      "It goes out Thursday, not Tuesday. We told the press already.",
      ...Array.from({ length: 30 }, (_, k) => `Filler line number ${k} about the weather in the harbour today.`),
    ]);
    const draft = digest(request(messages, 84));
    // Room for the correction and its subjects, and a line more: the filler with a number outranks plain sentences
    // (84 tokens: the count is an upper bound on o200k, which reads " harbour" as a token the bound does not carry).
    expect(userLinesOf(draft.text)).toEqual(["- [#1] The Heron release.", "- [#2] It goes out Thursday, not Tuesday. We told the press already.", "- [#32] Filler line number 29 about the weather in the harbour today."]);
  });

  it("never keeps a superseded value without its correction, at any budget", () => {
    const random = seededRandom(11);
    for (let run = 0; run < 200; run++) {
      const contents: string[] = [];
      const pairs: [string, string][] = [];
      for (let k = 0; k < 12; k++) {
        const subject = `Project${k}`;
        const original = `${subject} ships on day ${k * 3 + 1}.`;
        const correction = `Actually, ${subject} ships on day ${k * 3 + 2}.`;
        pairs.push([original, correction]);
        contents.push(original, ...Array.from({ length: Math.floor(random() * 4) }, (_, f) => `Note ${f} on ${subject}: the team met and talked for a while.`));
        contents.splice(Math.floor(random() * contents.length) + 1, 0, `Remember the 3 boxes of ${subject}.`);
        contents.push(correction);
      }
      const budget = 40 + Math.floor(random() * 400);
      const { text } = digest(request(said(contents), budget));
      expect(countTokens(text)).toBeLessThanOrEqual(budget);
      for (const [original, correction] of pairs) if (text.includes(original)) expect(text).toContain(correction);
    }
  });

  it("updates a previous digest instead of stacking on it", () => {
    const repeated = "Actually the deadline is Friday the 14th, not Thursday.";
    const messages = history(100, new Map([[23, repeated], [40, "Stop sending the drafts to Porto."], [61, repeated], [88, "I said the Lisbon office."]]));
    const a = digest(request(messages.slice(0, 50), 800));
    const b = digest(request(messages.slice(50), 800, { text: a.text, summariser: "digest", state: a.state }));
    // Said again word for word, it is kept while there is room, and goes first when there is not.
    expect(occurrences(b.text, repeated)).toBe(2);
    const tight = digest(request(messages.slice(50), 500, { text: a.text, summariser: "digest", state: a.state }));
    expect(occurrences(tight.text, repeated)).toBe(1);
    expect(tight.loss[0]).toMatch(/^\d+ of the user's sentences left out \(messages #\d+–#\d+\): \d+ repeated/);
    expect(b.text.split("\n")[0]).toBe("Summary of messages #1–#100 (digest: the user's words verbatim, oldest first).");
    expect(b.text).toContain("Stop sending the drafts to Porto.");
    expect(b.text).toContain("I said the Lisbon office.");
    expect(b.text).not.toContain("Earlier summary");
    // The unkept counts run over both digests' messages.
    const [replies, results] = [messages.filter((m) => m.role === "assistant").length, messages.filter((m) => m.role === "tool").length];
    expect(b.loss.at(-1)).toMatch(new RegExp(`^${replies} assistant replies and ${results} tool results`));
    // The state is plain JSON, and re-reading it with nothing new reproduces the text.
    expect(JSON.parse(JSON.stringify(b.state))).toEqual(b.state);
    expect(digest(request([], 800, { text: b.text, summariser: "digest", state: JSON.parse(JSON.stringify(b.state)) })).text).toBe(b.text);
  });

  it("keeps pasted data pasted in the next digest: where it stood said so, not its text", () => {
    const table = "Here are the numbers:\nround              copies  returns\nSedgebury           2617  32.6%";
    const a = digest(request([{ seq: 1, role: "user", content: table, createdAt: "2026-11-27T10:00:00Z" }], 800));
    const kindOf = (state: unknown) => (state as { units: { text: string; kind: string }[] }).units.find((u) => u.text.startsWith("Sedgebury"))!.kind;
    expect(kindOf(a.state)).toBe("pasted");
    const b = digest(request([{ seq: 2, role: "user", content: "Thanks.", createdAt: "2026-11-27T10:01:00Z" }], 800, { text: a.text, summariser: "digest", state: JSON.parse(JSON.stringify(a.state)) }));
    expect(kindOf(b.state)).toBe("pasted");
  });

  it("carries another summariser's text as the earlier summary", () => {
    const previous = { text: "The user ships from Oslo.\nThey prefer metric units.", summariser: "model:gpt-test-mini", state: null };
    const draft = digest(request(history(30).slice(20), 600, previous));
    const lines = draft.text.split("\n");
    expect(lines[0]).toBe("Summary of earlier history and messages #21–#30 (digest: the user's words verbatim, oldest first).");
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
    const messages: SummaryInputMessage[] = [
      { seq: 1, role: "user", content: "Look at src/app.ts and report.pdf, e.g. the intro and/or the end.", createdAt: at },
      { seq: 2, role: "assistant", content: "", toolCalls: [{ name: "read_file", arguments: '{"path":"./docs/a.md"}' }], createdAt: at },
      { seq: 3, role: "tool", toolName: "read_file", content: "See https://example.com/guide?x=1. Imports src/app.ts.", createdAt: at },
      { seq: 4, role: "assistant", content: "Saved to r2://artifacts/t1/c9/report.json, see /etc/hosts.", toolCalls: [{ name: "read_file", arguments: '{"path":"src/app.ts"}' }], createdAt: at },
      { seq: 5, role: "user", content: "And src/app.ts again, plus https://example.com/guide?x=1", createdAt: at },
    ];
    const { text } = digest(request(messages, 2_000));
    const files = text.slice(text.indexOf("Files, artifacts and tools:")).trim().split("\n").slice(1);
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
    const denial = "[not run: the user denied this tool call] Their reason: not the drafts, they are mine.";
    const messages: SummaryInputMessage[] = [
      { seq: 1, role: "user", content: "Tidy up the workspace.", createdAt: at },
      { seq: 2, role: "assistant", content: "", toolCalls: [{ name: "delete_file", arguments: '{"path":"drafts/a.md"}' }, { name: "search", arguments: "{}" }], createdAt: at },
      { seq: 3, role: "tool", toolName: "delete_file", content: denial, denied: { reason: "not the drafts,\n they are mine." }, createdAt: at },
      { seq: 4, role: "tool", toolName: "search", content: denial, createdAt: at },
    ];
    const { text, state } = digest(request(messages, 2_000));
    expect(userLinesOf(text)).toEqual(["- [#1] Tidy up the workspace.", "- [#3] denied running delete_file: not the drafts, they are mine."]);
    expect((state as { unkept: { tool: number } }).unkept.tool).toBe(1);
  });

  it("fits every budget, gives up the sentences that carry least first, and says what it dropped", () => {
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
      expect(draft.loss.at(-1)).toBe(`${replies} assistant replies and ${results} tool results (${unkeptTokens} tokens) are not kept beyond the lines above; search_history finds them`);
      if (maxTokens >= 400) for (const correction of CORRECTIONS.values()) expect(draft.text).toContain(correction);
      if (maxTokens >= 400) for (const quote of QUOTES.values()) expect(draft.text).toContain(quote);
      // Short of room, what is left of the user's words is the planted facts, not the filler around them.
      const planted = [...CORRECTIONS.values(), ...QUOTES.values()];
      if (maxTokens <= 120) for (const line of userLinesOf(draft.text)) expect(planted.some((p) => line.includes(p)), line).toBe(true);
      // What the text does not show, the state does not keep; what it dropped, the loss note counts.
      const units = (draft.state as { units: { text: string }[] }).units;
      for (const unit of units) expect(draft.text).toContain(unit.text);
      const left = Number(/^(\d+) of the user's sentences left out/.exec(draft.loss[0] ?? "")?.[1] ?? 0);
      const all = messages.filter((m) => m.role === "user").reduce((sum, m) => sum + userUnits(m.content).length, 0);
      expect(units.length + left).toBe(all);
    }
    // With room for little, that little is facts: at 120 tokens four of the eight.
    expect(userLinesOf(digest(request(messages, 120)).text)).toHaveLength(4);
  });

  it("reads a version-1 digest's state as the user's words it kept", () => {
    const state = {
      version: 1,
      from: 1,
      to: 9,
      earlier: "",
      items: { corrections: [{ text: "Actually it is blue.", seqs: [4] }], quotes: [{ text: '"Keep it short"', seqs: [2] }], decisions: [{ text: "We will use Postgres.", seqs: [6], role: "assistant" }], tasks: [], files: [{ text: "src/a.ts", seqs: [2] }], timeline: [] },
      dropped: { timeline: { count: 3, from: 1, to: 7 } },
      unkept: { assistant: 4, tool: 2, tokens: 900 },
    };
    const draft = digest(request(said(["x"]).map((m) => ({ ...m, seq: 10, content: "Ship it on Monday." })), 600, { text: "old", summariser: "digest", state }));
    expect(userLinesOf(draft.text)).toEqual(['- [#2] … "Keep it short" …', "- [#4] … Actually it is blue. …", "- [#10] Ship it on Monday."]);
    expect(draft.text).toContain("Decisions the assistant stated:\n- [#6] We will use Postgres.");
    expect(draft.loss[0]).toBe("3 of the user's sentences left out (messages #1–#7): 3 other; search_history finds them");
  });

  it("is deterministic", async () => {
    const messages = history(120);
    const first = await digestSummariser.summarise(request(messages, 700));
    const second = await digestSummariser.summarise(request(structuredClone(messages), 700));
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });

  it("treats a malformed previous state as another summariser's text, without throwing", () => {
    const messages = history(10);
    for (const state of [{ corrections: 5 }, null, 7, "x", [], { version: 1, items: null }, { version: 2, units: null }]) {
      const draft = digest(request(messages, 400, { text: "Older notes.", summariser: "digest", state }));
      expect(draft.text).toContain("Earlier summary:\nOlder notes.");
    }
    const odd = { version: 2, from: "1", units: [{ text: 5 }, { seq: 3, i: 0, of: 1, text: "Fine.", kind: "shout" }, { seq: "3", i: 0, of: 1, text: "Fine.", kind: "other" }, null], files: { length: 2 }, dropped: { other: { count: -1 } }, unkept: [] };
    const draft = digest(request(messages, 400, { text: "Older notes.", summariser: "digest", state: odd }));
    expect(draft.text.split("\n")[0]).toBe("Summary of messages #1–#10 (digest: the user's words verbatim, oldest first).");
    expect(draft.text).not.toContain("Fine.");
  });
});

describe("the digest on adversarial text", () => {
  // Each of these used to take seconds to minutes (quadratic scans); `npx tsx bench/digest-adversarial.ts` times them.
  const cases = ADVERSARIAL_INPUTS;
  it("splits and summarises 100 KB runs of dots, unclosed quotes, abbreviations, paths and one long word within budget", () => {
    for (const [name, text] of Object.entries(cases)) {
      const draft = digest(request([{ seq: 1, role: "user", content: text, createdAt: at }], 2_000));
      expect(countTokens(draft.text), name).toBeLessThanOrEqual(2_000);
      expect(draft.text.length, name).toBeGreaterThan(0);
    }
  });
});
