/**
 * The default summariser: a digest that needs no model. What a compaction
 * must never lose is what the user said, and it is small next to tool output
 * and the model's replies, so the digest keeps the user's messages verbatim,
 * oldest first, for as long as they fit. Over its budget it gives up, in this
 * order: small talk, the files-and-tools list, the assistant's stated
 * decisions, pasted data, plain sentences, requests, then sentences carrying
 * facts (names, then numbers, dates and paths, then quotes, decisions and
 * instructions), and corrections last, each with the sentences around it that
 * say what it corrects; a sentence that says most of an earlier one's words
 * again is an update, kept as a correction. A sentence the user repeated word for word goes
 * before all of these. "…" marks where a message lost a sentence, and the
 * loss notes count what went, by kind. An update merges the previous digest's
 * state instead of summarising a summary, so kept words stay verbatim however
 * often it runs.
 */
import { countTokens } from "../core/tokens";
import { markerSpans, prefixWithin } from "../protect/token-cut";
import type { Summariser, SummaryDraft, SummaryInputMessage, SummaryRequest } from "./summary";
import { contentWords, distinctiveWords, isDecision, KEEP_RANK, mentionsIn, sentencesOf, UNIT_KINDS, userUnits, type UnitKind } from "./user-words";

/** A unit of the user's words: sentence `i` of the `of` in message `seq`. */
interface Unit {
  seq: number;
  i: number;
  of: number;
  text: string;
  kind: UnitKind;
  /** The corrections (`seq.i`) this unit gives the subject of: it goes only once they all have. */
  anchors?: string[];
  /** The user said exactly this before: it goes first. */
  repeat?: true;
}

/** A line of what the runtime saw besides the user's words: a file or tool, or a decision the assistant stated. */
interface Item {
  text: string;
  seqs: number[];
}

const LOSS_KINDS = [...UNIT_KINDS, "repeated", "assistant", "files"] as const;
type LossKind = (typeof LOSS_KINDS)[number];

interface Dropped {
  count: number;
  from: number;
  to: number;
}

/** What the text shows, plus what the loss notes need, so the next update can merge it exactly. */
interface DigestState {
  version: 2;
  from: number | null;
  to: number | null;
  /** Another summariser's text this digest carries, as cut. */
  earlier: string;
  units: Unit[];
  assistant: Item[];
  files: Item[];
  /** Everything this digest and those it updated dropped, so its loss notes stay true. */
  dropped: Partial<Record<LossKind, Dropped>>;
  /** Assistant replies and tool results covered: the digest keeps them only as the lines above. */
  unkept: { assistant: number; tool: number; tokens: number };
}

const USER_HEADING = "The user said, verbatim (\u2026 marks a cut):";
const ASSISTANT_HEADING = "Decisions the assistant stated:";
const FILES_HEADING = "Files, artifacts and tools:";
const EARLIER_HEADING = "Earlier summary:";
/** Under budget pressure these go right after the user's small talk: they are the model's and the tools' words. */
const ITEM_RANK = { files: 1.4, assistant: 1.6 } as const;
const LOSS_NAMES: Record<LossKind, string> = {
  correction: "corrections",
  decision: "decisions",
  instruction: "instructions",
  quote: "quotes",
  number: "with numbers",
  date: "with dates",
  path: "with paths",
  name: "with names",
  task: "requests and questions",
  other: "other",
  pasted: "pasted lines",
  filler: "small talk",
  repeated: "repeated",
  assistant: "",
  files: "",
};
const ITEM_CHARS = 300;
const SEQS_PER_FILE = 3;

export const digestSummariser: Summariser = {
  name: "digest",
  summarise: async (request) => digest(request),
};

export function digest(request: SummaryRequest): SummaryDraft {
  const { previous, messages, maxTokens } = request;
  const prior = previous?.summariser === "digest" ? readState(previous.state) : null;
  const carried = prior ? prior.earlier : typeof previous?.text === "string" ? previous.text.trim() : "";
  const first = messages.reduce((low, m) => Math.min(low, m.seq), Infinity);
  const last = messages.reduce((high, m) => Math.max(high, m.seq), -Infinity);
  const from = prior?.from ?? (messages.length > 0 ? first : null);
  const to = messages.length > 0 ? last : (prior?.to ?? null);
  const covers = `Summary of ${carried ? "earlier history and " : ""}${range(from, to)} (digest: the user's words verbatim, oldest first).`;

  const dropped: Partial<Record<LossKind, Dropped>> = { ...prior?.dropped };
  const note = (kind: LossKind, seqs: readonly number[]) => {
    const [low, high] = [Math.min(...seqs), Math.max(...seqs)];
    const known = dropped[kind];
    dropped[kind] = known ? { count: known.count + 1, from: Math.min(known.from, low), to: Math.max(known.to, high) } : { count: 1, from: low, to: high };
  };
  const units = prior ? prior.units.map((u) => ({ ...u })) : [];
  const assistant = new Map((prior?.assistant ?? []).map((item) => [item.text, { ...item }]));
  const files = new Map((prior?.files ?? []).map((item) => [item.text, { ...item }]));
  const unkept = { ...(prior?.unkept ?? { assistant: 0, tool: 0, tokens: 0 }) };
  const seen = new Set(units.map((u) => sameWords(u.text)));
  const said = new SaidBefore(units);
  for (const message of messages) {
    collectMentions(message, files);
    if (message.role === "user") addUserUnits(message, userUnits(message.content), units, seen, said);
    else if (message.role === "tool" && message.denied) {
      // The user's decision, not tool output: the model must not try the call again as if it had never been refused.
      const reason = message.denied.reason === null ? "" : `: ${oneLine(message.denied.reason)}`;
      addUserUnits(message, [{ text: `denied running ${oneLine(message.toolName ?? "a tool")}${reason}`, kind: "decision" }], units, seen, said);
    } else if (message.role === "assistant") {
      for (const sentence of sentencesOf(oneLine(message.content))) {
        if (!isDecision(sentence)) continue;
        const text = clip(sentence, ITEM_CHARS);
        if (!assistant.has(text)) assistant.set(text, { text, seqs: [message.seq] });
      }
      unkept.assistant += 1;
      unkept.tokens += countTokens(message.content) + (message.toolCalls ?? []).reduce((sum, call) => sum + countTokens(call.arguments), 0);
    } else if (message.role === "tool") {
      unkept.tool += 1;
      unkept.tokens += countTokens(message.content);
    }
  }

  const kept = { units, assistant: [...assistant.values()], files: [...files.values()] };
  // The carried summary may take half the budget, so the new messages keep room.
  let earlier = cutTo(carried, Math.floor(maxTokens / 2));
  const render = () =>
    [
      covers,
      ...(earlier ? [EARLIER_HEADING, earlier] : []),
      ...(kept.units.length ? [USER_HEADING, ...userLines(kept.units)] : []),
      ...(kept.assistant.length ? [ASSISTANT_HEADING, ...kept.assistant.map((item) => `- [#${item.seqs[0]}] ${item.text}`)] : []),
      ...(kept.files.length ? [FILES_HEADING, ...kept.files.map(fileLine)] : []),
    ].join("\n");

  const order = dropOrder(kept);
  let next = 0;
  const dropNext = (): number => {
    const step = order[next++];
    if (!step) return 0;
    return step.drop(kept, note);
  };
  // Counting piece by piece (near enough additive across line breaks) keeps dropping linear; the exact count then confirms.
  let over = countTokens(render()) - maxTokens;
  while (over > 0 && next < order.length) over -= dropNext();
  let text = render();
  for (let excess = countTokens(text) - maxTokens; excess > 0; excess = countTokens(text) - maxTokens) {
    if (next < order.length) dropNext();
    else if (earlier) {
      const cut = cutTo(earlier, countTokens(earlier) - excess);
      earlier = cut.length < earlier.length ? cut : "";
    } else break;
    text = render();
  }
  if (countTokens(text) > maxTokens) text = "";

  const loss = lossNotes(dropped);
  if (earlier !== carried) loss.push(earlier ? "the earlier summary was cut to fit" : "the earlier summary was dropped to fit");
  if (unkept.assistant + unkept.tool > 0) {
    const replies = `${unkept.assistant} assistant repl${unkept.assistant === 1 ? "y" : "ies"}`;
    const results = `${unkept.tool} tool result${unkept.tool === 1 ? "" : "s"}`;
    loss.push(`${replies} and ${results} (${unkept.tokens.toLocaleString("en-US")} tokens) are not kept beyond the lines above`);
  }
  if (!text) loss.push(`not even the summary's first line fits ${maxTokens} tokens`);
  const state: DigestState = { version: 2, from, to, earlier, ...kept, dropped, unkept };
  return { text, state, loss };
}

type Note = (kind: LossKind, seqs: readonly number[]) => void;

/**
 * Adds a message's units after those kept so far. A correction's subject is the
 * sentence before it (the previous message's last, when it opens its message)
 * and the one after: they stay as long as it does. A sentence the user already
 * said is marked as a repeat.
 */
function addUserUnits(message: SummaryInputMessage, words: readonly { text: string; kind: UnitKind }[], units: Unit[], seen: Set<string>, said: SaidBefore): void {
  const start = units.length;
  const previousLast = units.at(-1);
  words.forEach((w, i) => {
    const key = sameWords(w.text);
    const repeat = seen.has(key);
    seen.add(key);
    const kind = !repeat && said.restates(w) ? "correction" : w.kind;
    units.push({ seq: message.seq, i, of: words.length, text: w.text, kind, ...(repeat ? { repeat: true as const } : {}) });
  });
  const added = units.slice(start);
  for (const unit of added) said.add(unit);
  added.forEach((unit, k) => {
    if (unit.kind !== "correction" || unit.repeat) return;
    const id = `${unit.seq}.${unit.i}`;
    const before = k > 0 ? added[k - 1] : previousLast;
    for (const neighbour of [before, added[k + 1]]) {
      // Small talk and repeats say nothing a correction could need.
      if (neighbour && !["correction", "filler"].includes(neighbour.kind) && !neighbour.repeat) neighbour.anchors = [...(neighbour.anchors ?? []), id];
    }
  });
}

/**
 * What the user said in earlier messages, indexed by the names, numbers and
 * paths in it, to tell whether a sentence says most of an earlier one again
 * ("Stonechat runs on Vue." then "…: Stonechat runs on Postgres."): an update,
 * so it is kept as a correction, and the old value goes before it, however it
 * was put. Only sentences sharing such a word are compared.
 */
class SaidBefore {
  private readonly byWord = new Map<string, { content: Set<string>; distinctive: Set<string> }[]>();

  constructor(units: readonly Unit[]) {
    for (const unit of units) this.add(unit);
  }

  add(unit: Unit): void {
    if (unit.kind === "filler" || unit.kind === "pasted" || unit.repeat) return;
    const entry = { content: contentWords(unit.text), distinctive: distinctiveWords(unit.text) };
    for (const word of entry.distinctive) {
      const known = this.byWord.get(word);
      if (known) known.push(entry);
      else this.byWord.set(word, [entry]);
    }
  }

  restates(unit: { text: string; kind: UnitKind }): boolean {
    if (unit.kind === "correction" || unit.kind === "filler" || unit.kind === "pasted") return false;
    const said = contentWords(unit.text);
    if (said.size < 2) return false;
    for (const word of distinctiveWords(unit.text)) {
      for (const before of this.byWord.get(word) ?? []) {
        let shared = 0;
        for (const w of before.content) if (said.has(w)) shared++;
        // About the same thing (a name, a number or a path in both), in mostly the same words.
        if (shared >= 2 && shared * 2 >= before.content.size) return true;
      }
    }
    return false;
  }
}

interface DropStep {
  /** Drops what this step stands for and returns about how many tokens the text lost. */
  drop(kept: { units: Unit[]; assistant: Item[]; files: Item[] }, note: Note): number;
}

/**
 * The order things go in: everything but corrections and their subjects by
 * rank, oldest first within a rank; then corrections, oldest first, each with
 * its subjects.
 */
function dropOrder(kept: { units: Unit[]; assistant: Item[]; files: Item[] }): DropStep[] {
  const ranked: { rank: number; seq: number; i: number; step: DropStep }[] = [];
  for (const unit of kept.units) {
    if (unit.repeat) ranked.push({ rank: 0, seq: unit.seq, i: unit.i, step: { drop: (k, note) => dropUnits(k, [unit], note, "repeated") } });
    else if (unit.kind !== "correction" && !unit.anchors?.length) ranked.push({ rank: KEEP_RANK[unit.kind], seq: unit.seq, i: unit.i, step: { drop: (k, note) => dropUnits(k, [unit], note) } });
  }
  for (const kind of ["files", "assistant"] as const) {
    for (const item of kept[kind]) {
      ranked.push({
        rank: ITEM_RANK[kind],
        seq: item.seqs[0]!,
        i: 0,
        step: {
          drop: (k, note) => {
            k[kind].splice(k[kind].indexOf(item), 1);
            note(kind, item.seqs);
            return countTokens(kind === "files" ? fileLine(item) : item.text) + 6;
          },
        },
      });
    }
  }
  ranked.sort((a, b) => a.rank - b.rank || a.seq - b.seq || a.i - b.i);
  const corrections = kept.units.filter((u) => u.kind === "correction" && !u.repeat);
  const subjects = (id: string) => kept.units.filter((u) => u.anchors?.includes(id));
  return [
    ...ranked.map((r) => r.step),
    ...corrections.map(
      (correction): DropStep => ({
        drop: (k, note) => {
          const id = `${correction.seq}.${correction.i}`;
          // A subject shared with a later correction stays for that one.
          const gone = subjects(id).filter((u) => u.anchors!.every((a) => a === id || !k.units.some((c) => `${c.seq}.${c.i}` === a)));
          return dropUnits(k, [correction, ...gone], note);
        },
      }),
    ),
  ];
}

function dropUnits(kept: { units: Unit[] }, gone: readonly Unit[], note: Note, as?: LossKind): number {
  let saved = 0;
  for (const unit of gone) {
    const at = kept.units.indexOf(unit);
    if (at === -1) continue;
    kept.units.splice(at, 1);
    note(as ?? unit.kind, [unit.seq]);
    // Its words and the space before them, less the "…" that now marks the gap; or its whole line.
    saved += countTokens(unit.text) + (kept.units.some((u) => u.seq === unit.seq) ? 0 : countTokens(`- [#${unit.seq}]`) + 1);
  }
  return saved;
}

/** A line per user message, its kept units in order, "…" wherever some were left out. */
function userLines(units: readonly Unit[]): string[] {
  const lines: string[] = [];
  for (let k = 0; k < units.length; ) {
    const seq = units[k]!.seq;
    const parts: string[] = [];
    let expected = 0;
    let of = 0;
    for (; k < units.length && units[k]!.seq === seq; k++) {
      const unit = units[k]!;
      if (unit.i > expected) parts.push("\u2026");
      parts.push(unit.text);
      expected = unit.i + 1;
      of = unit.of;
    }
    if (expected < of) parts.push("\u2026");
    lines.push(`- [#${seq}] ${parts.join(" ")}`);
  }
  return lines;
}

function fileLine(item: Item): string {
  return `- ${item.text} (${item.seqs.map((seq) => `#${seq}`).join(", ")})`;
}

/** Files, URLs, artifact pointers and tools a message mentions; a file keeps the first two messages that mention it and the latest. */
function collectMentions(message: SummaryInputMessage, files: Map<string, Item>): void {
  const calls = message.toolCalls ?? [];
  const mentions = [...[message.content, ...calls.map((call) => call.arguments)].flatMap(mentionsIn), ...[...calls.map((call) => call.name), ...(message.toolName ? [message.toolName] : [])].map((name) => `tool: ${clip(oneLine(name), 120)}`)];
  for (const text of mentions) {
    const known = files.get(text);
    if (!known) files.set(text, { text, seqs: [message.seq] });
    else if (!known.seqs.includes(message.seq)) known.seqs = [...known.seqs.slice(0, SEQS_PER_FILE - 1), message.seq];
  }
}

function lossNotes(dropped: Partial<Record<LossKind, Dropped>>): string[] {
  const notes: string[] = [];
  const user = LOSS_KINDS.filter((kind) => kind !== "assistant" && kind !== "files" && dropped[kind]);
  if (user.length) {
    const total = user.reduce((sum, kind) => sum + dropped[kind]!.count, 0);
    const low = Math.min(...user.map((kind) => dropped[kind]!.from));
    const high = Math.max(...user.map((kind) => dropped[kind]!.to));
    // Least important first, as they were given up.
    const byKind = [...user].reverse().map((kind) => `${dropped[kind]!.count} ${LOSS_NAMES[kind]}`);
    notes.push(`${total} of the user's sentences left out (${range(low, high)}): ${byKind.join(", ")}`);
  }
  const files = dropped.files;
  if (files) notes.push(`${files.count} file and tool line${files.count === 1 ? "" : "s"} dropped (${range(files.from, files.to)})`);
  const assistant = dropped.assistant;
  if (assistant) notes.push(`${assistant.count} decision${assistant.count === 1 ? "" : "s"} the assistant stated dropped (${range(assistant.from, assistant.to)})`);
  return notes;
}

function range(from: number | null, to: number | null): string {
  if (from === null || to === null) return "no messages";
  return from === to ? `message #${from}` : `messages #${from}–#${to}`;
}

/** Two sentences are the same when their words are, whatever the case and spacing. */
function sameWords(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ");
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = maxChars - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end).trimEnd()}…`;
}

/** The start of `text` within `budget` tokens, marked as cut; never splits a redaction marker. */
function cutTo(text: string, budget: number): string {
  if (countTokens(text) <= budget) return text;
  const end = prefixWithin(text, budget - 1, markerSpans(text));
  return end > 0 ? `${text.slice(0, end).trimEnd()}…` : "";
}

/**
 * A previous digest's state, read defensively: it comes back from storage.
 * Null when it is not one. A version-1 digest (sections of sorted bullets) is
 * read as units, each marked as cut from its message.
 */
function readState(value: unknown): DigestState | null {
  if (!isRecord(value)) return null;
  if (value.version === 1) return readLegacyState(value);
  if (value.version !== 2 || !Array.isArray(value.units)) return null;
  const units = value.units.flatMap((u: unknown): Unit[] => {
    if (!isRecord(u) || !isSeq(u.seq) || !isCount(u.i) || !isCount(u.of) || typeof u.text !== "string" || u.text.includes("\n")) return [];
    if (!UNIT_KINDS.includes(u.kind as UnitKind)) return [];
    const anchors = Array.isArray(u.anchors) ? u.anchors.filter((a): a is string => typeof a === "string") : [];
    return [{ seq: u.seq, i: u.i, of: Math.max(u.of, u.i + 1), text: u.text, kind: u.kind as UnitKind, ...(anchors.length ? { anchors } : {}), ...(u.repeat === true ? { repeat: true as const } : {}) }];
  });
  units.sort((a, b) => a.seq - b.seq || a.i - b.i);
  return withSharedFields(value, { units, assistant: readItems(value.assistant), files: readItems(value.files), dropped: readDropped(value.dropped, LOSS_KINDS) });
}

/** A state from the fields every version keeps alike (coverage, the carried summary, the unkept counts) and the rest. */
function withSharedFields(value: Record<string, unknown>, parts: Pick<DigestState, "units" | "assistant" | "files" | "dropped">): DigestState {
  return {
    version: 2,
    from: isSeq(value.from) ? value.from : null,
    to: isSeq(value.to) ? value.to : null,
    earlier: typeof value.earlier === "string" ? value.earlier : "",
    ...parts,
    unkept: readUnkept(value.unkept),
  };
}

/** Version 1 kept sorted sections; their bullets become units, each shown as an excerpt of its message. */
function readLegacyState(value: Record<string, unknown>): DigestState | null {
  if (!isRecord(value.items)) return null;
  const kinds: Record<string, UnitKind | "files"> = { corrections: "correction", quotes: "quote", decisions: "decision", tasks: "task", files: "files", timeline: "other" };
  const units: Unit[] = [];
  const assistant: Item[] = [];
  const files: Item[] = [];
  for (const [section, kind] of Object.entries(kinds)) {
    for (const item of readItems(value.items[section])) {
      if (kind === "files") files.push(item);
      else if (kind === "decision" && isRecord(value.items) && roleOf(value.items[section], item.text) === "assistant") assistant.push(item);
      else units.push({ seq: item.seqs[0]!, i: 0, of: 0, text: item.text, kind });
    }
  }
  units.sort((a, b) => a.seq - b.seq);
  // Odd places with a gap on each side: the reader sees they are excerpts.
  units.forEach((unit, k) => {
    const rank = units.slice(0, k).filter((u) => u.seq === unit.seq).length;
    unit.i = rank * 2 + 1;
  });
  for (const unit of units) unit.of = Math.max(...units.filter((u) => u.seq === unit.seq).map((u) => u.i)) + 2;
  const legacy = readDropped(value.dropped, ["corrections", "quotes", "decisions", "tasks", "files", "timeline"]);
  const dropped: Partial<Record<LossKind, Dropped>> = {};
  for (const [section, d] of Object.entries(legacy)) dropped[(kinds[section] ?? "other") as LossKind] = d;
  return withSharedFields(value, { units, assistant, files, dropped });
}

function roleOf(items: unknown, text: string): unknown {
  return Array.isArray(items) ? (items.find((item: unknown) => isRecord(item) && item.text === text) as Record<string, unknown> | undefined)?.role : undefined;
}

/** Valid items as fresh copies, so merging never changes the caller's state. */
function readItems(value: unknown): Item[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    if (!isRecord(item) || typeof item.text !== "string" || item.text.includes("\n")) return [];
    const seqs = Array.isArray(item.seqs) ? item.seqs.filter(isSeq).slice(0, SEQS_PER_FILE) : [];
    return seqs.length ? [{ text: item.text, seqs }] : [];
  });
}

function readDropped<K extends string>(value: unknown, kinds: readonly K[]): Partial<Record<K, Dropped>> {
  if (!isRecord(value)) return {};
  const out: Partial<Record<K, Dropped>> = {};
  for (const kind of kinds) {
    const d = value[kind];
    if (isRecord(d) && isCount(d.count) && d.count > 0 && isSeq(d.from) && isSeq(d.to)) out[kind] = { count: d.count, from: d.from, to: d.to };
  }
  return out;
}

function readUnkept(value: unknown): DigestState["unkept"] {
  const counts = isRecord(value) ? value : {};
  const count = (v: unknown) => (isCount(v) ? v : 0);
  return { assistant: count(counts.assistant), tool: count(counts.tool), tokens: count(counts.tokens) };
}

const isSeq = (v: unknown): v is number => Number.isSafeInteger(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
