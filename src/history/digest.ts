/**
 * The default summariser: a digest that needs no model. What a compaction
 * must never lose is what the user said, and it is small next to tool output
 * and the model's replies, so the digest keeps the user's messages verbatim,
 * oldest first, for as long as they fit. The user's words have at least
 * `USER_SHARE` of the budget; the files-and-tools list and the decisions the
 * assistant stated share the rest with whatever room the user's words leave.
 * Over budget, the user's sentences go in the order `user-rank.ts` gives:
 * least information per token first (a sentence the user repeated before all),
 * an update never before what it updates; a long sentence goes clause by
 * clause, so the clause that carries its facts stays longest. "…" marks where
 * a message lost a sentence, and the loss notes count what went, by kind, and
 * say that search_history still finds it. An update merges the previous
 * digest's state instead of summarising a summary, so kept words stay
 * verbatim however often it runs.
 */
import { countTokens } from "../core/tokens";
import { markerSpans, prefixWithin } from "../protect";
import type { Summariser, SummaryDraft, SummaryInputMessage, SummaryRequest } from "./summary";
import { dropSteps, unitKind, type Unit } from "./user-rank";
import { isDecision, mentionsIn, sentencesOf, UNIT_KINDS, userUnits, type UnitKind } from "./user-words";

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
/**
 * The share of the budget the user's words always have. The rest holds the files-and-tools list and the assistant's
 * decisions, which also use whatever the user's words leave: what the model and the tools said is found again in
 * stored history with search_history, while what the user said is what the next answer must honour.
 */
export const USER_SHARE = 0.95;
/** What a loss note calls each kind: for one, and for more. */
const LOSS_NAMES: Record<LossKind, readonly [string, string]> = {
  correction: ["correction", "corrections"],
  quote: ["quote", "quotes"],
  path: ["with a path or URL", "with paths or URLs"],
  date: ["with a date", "with dates"],
  number: ["with a number", "with numbers"],
  name: ["with a name", "with names"],
  question: ["question", "questions"],
  other: ["other", "other"],
  pasted: ["pasted line", "pasted lines"],
  filler: ["small talk", "small talk"],
  repeated: ["repeated", "repeated"],
  assistant: ["", ""],
  files: ["", ""],
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
  for (const message of messages) {
    collectMentions(message, files);
    if (message.role === "user") addUserUnits(message, userUnits(message.content), units, seen);
    else if (message.role === "tool" && message.denied) {
      // The user's decision, not tool output: it undoes the model's call, as a correction undoes a value, and the model
      // must not try the call again as if it had never been refused.
      const reason = message.denied.reason === null ? "" : `: ${oneLine(message.denied.reason)}`;
      addUserUnits(message, [{ text: `denied running ${oneLine(message.toolName ?? "a tool")}${reason}`, kind: "correction" }], units, seen);
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

  const userSteps = dropSteps(kept.units);
  const itemSteps = (["files", "assistant"] as const).flatMap((kind) => [...kept[kind]].sort((a, b) => a.seqs[0]! - b.seqs[0]!).map((item) => ({ kind, item })));
  const userShare = Math.floor(maxTokens * USER_SHARE);
  let itemTokens = kept.files.reduce((sum, item) => sum + itemCost(fileLine(item)), 0) + kept.assistant.reduce((sum, item) => sum + itemCost(item.text), 0);
  /** Gives up the next thing: an item while the items pass their share (or the user's words are all gone), else the user's least worth. */
  const dropNext = (): number => {
    const item = itemTokens > maxTokens - userShare || userSteps.length === 0 ? itemSteps.shift() : undefined;
    if (item) {
      const { kind } = item;
      kept[kind].splice(kept[kind].indexOf(item.item), 1);
      note(kind, item.item.seqs);
      const saved = itemCost(kind === "files" ? fileLine(item.item) : item.item.text);
      itemTokens -= saved;
      return saved;
    }
    const step = userSteps.shift();
    return step ? dropUnits(kept, step, note) : 0;
  };
  const more = () => userSteps.length + itemSteps.length > 0;
  // Counting piece by piece (near enough additive across line breaks) keeps dropping linear; the exact count then confirms.
  let over = countTokens(render()) - maxTokens;
  while (over > 0 && more()) over -= dropNext();
  let text = render();
  for (let excess = countTokens(text) - maxTokens; excess > 0; excess = countTokens(text) - maxTokens) {
    if (more()) dropNext();
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
    loss.push(`${replies} and ${results} (${unkept.tokens.toLocaleString("en-US")} tokens) are not kept beyond the lines above; search_history finds them`);
  }
  if (!text) loss.push(`not even the summary's first line fits ${maxTokens} tokens`);
  const state: DigestState = { version: 2, from, to, earlier, ...kept, dropped, unkept };
  return { text, state, loss };
}

type Note = (kind: LossKind, seqs: readonly number[]) => void;

/** Adds a message's units after those kept so far; a sentence the user already said is marked as a repeat. */
function addUserUnits(message: SummaryInputMessage, words: readonly { text: string; kind: UnitKind }[], units: Unit[], seen: Set<string>): void {
  words.forEach((w, i) => {
    const key = sameWords(w.text);
    const repeat = seen.has(key);
    seen.add(key);
    units.push({ seq: message.seq, i, of: words.length, text: w.text, kind: w.kind, ...(repeat ? { repeat: true as const } : {}) });
  });
}

/** An item's line and its line break. */
function itemCost(text: string): number {
  return countTokens(text) + 6;
}

function dropUnits(kept: { units: Unit[] }, gone: readonly Unit[], note: Note): number {
  let saved = 0;
  for (const unit of gone) {
    const at = kept.units.indexOf(unit);
    if (at === -1) continue;
    kept.units.splice(at, 1);
    note(unit.repeat ? "repeated" : unitKind(unit), [unit.seq]);
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
    const byKind = [...user].reverse().map((kind) => `${dropped[kind]!.count} ${LOSS_NAMES[kind][dropped[kind]!.count === 1 ? 0 : 1]}`);
    notes.push(`${total} of the user's sentences left out (${range(low, high)}): ${byKind.join(", ")}; search_history finds them`);
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
    if (typeof u.kind !== "string" || !(UNIT_KINDS.includes(u.kind as UnitKind) || Object.hasOwn(EARLIER_KINDS, u.kind))) return [];
    // Kinds are read again from the text (earlier digests named others), but a correction stays one, and pasted data
    // stays pasted (what made it so, a fence, a table, a quotation, is not in its text).
    const kind = unitKind({ text: u.text, kind: u.kind as UnitKind });
    return [{ seq: u.seq, i: u.i, of: Math.max(u.of, u.i + 1), text: u.text, kind, ...(u.repeat === true ? { repeat: true as const } : {}) }];
  });
  units.sort((a, b) => a.seq - b.seq || a.i - b.i);
  return withSharedFields(value, { units, assistant: readItems(value.assistant), files: readItems(value.files), dropped: readDroppedKinds(value.dropped) });
}

/** Kinds earlier digests counted under other names, so their loss notes stay true. */
const EARLIER_KINDS: Record<string, LossKind> = { decision: "other", instruction: "other", task: "question" };

/** What a state says was dropped, earlier kinds counted under today's. */
function readDroppedKinds(value: unknown): Partial<Record<LossKind, Dropped>> {
  const dropped = readDropped(value, LOSS_KINDS);
  for (const [earlier, d] of Object.entries(readDropped(value, Object.keys(EARLIER_KINDS)))) {
    if (!d) continue;
    const into = EARLIER_KINDS[earlier]!;
    const known = dropped[into];
    dropped[into] = known ? { count: known.count + d.count, from: Math.min(known.from, d.from), to: Math.max(known.to, d.to) } : d;
  }
  return dropped;
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
  const kinds: Record<string, UnitKind | "files" | "decisions"> = { corrections: "correction", quotes: "quote", decisions: "decisions", tasks: "question", files: "files", timeline: "other" };
  const units: Unit[] = [];
  const assistant: Item[] = [];
  const files: Item[] = [];
  for (const [section, kind] of Object.entries(kinds)) {
    for (const item of readItems(value.items[section])) {
      if (kind === "files") files.push(item);
      else if (kind === "decisions" && isRecord(value.items) && roleOf(value.items[section], item.text) === "assistant") assistant.push(item);
      else units.push({ seq: item.seqs[0]!, i: 0, of: 0, text: item.text, kind: kind === "decisions" ? unitKind({ text: item.text, kind: "other" }) : unitKind({ text: item.text, kind }) });
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
  for (const [section, d] of Object.entries(legacy)) dropped[(section === "decisions" ? "other" : (kinds[section] ?? "other")) as LossKind] = d;
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
