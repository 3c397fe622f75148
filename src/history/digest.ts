/**
 * The default summariser: a digest that needs no model. It keeps what a
 * compaction must not lose as the user wrote it (corrections, quoted wording),
 * then decisions, open requests, the files and tools the conversation touched,
 * and a line per user message; over budget, sections give way in the reverse
 * of that order. An update merges the previous digest's entries instead of
 * summarising a summary, so verbatim lines stay verbatim however often it runs.
 */
import { countTokens } from "../core/tokens";
import { markerSpans, prefixWithin } from "../protect/token-cut";
import type { Summariser, SummaryDraft, SummaryInputMessage, SummaryRequest } from "./summary";

/** One bullet: its text and the messages it came from (one seq; up to three for a file or tool). */
interface Item {
  text: string;
  seqs: number[];
  role?: string;
}

const KINDS = ["corrections", "quotes", "decisions", "tasks", "files", "timeline"] as const;
type Kind = (typeof KINDS)[number];
/** Under budget pressure the timeline goes first and corrections last. */
const DROP_ORDER = [...KINDS].reverse();

const HEADINGS: Record<Kind, string> = {
  corrections: "Corrections the user made:",
  quotes: "Exact wording:",
  decisions: "Decisions:",
  tasks: "Open tasks:",
  files: "Files and artifacts:",
  timeline: "Timeline:",
};
/** How a loss line names dropped bullets: one, many. */
const DROPPED_NAMES: Record<Kind, [string, string]> = {
  corrections: ["older correction", "older corrections"],
  quotes: ["older exact quote", "older exact quotes"],
  decisions: ["older decision", "older decisions"],
  tasks: ["older open task", "older open tasks"],
  files: ["file or tool line", "file and tool lines"],
  timeline: ["timeline line", "timeline lines"],
};
const EARLIER_HEADING = "Earlier summary:";

interface Dropped {
  count: number;
  from: number;
  to: number;
}

/** What the text shows, plus what the loss lines need, so the next update can merge it exactly. */
interface DigestState {
  version: 1;
  from: number | null;
  to: number | null;
  /** Another summariser's text this digest carries, as cut. */
  earlier: string;
  items: Record<Kind, Item[]>;
  /** Everything this digest and those it updated dropped, so its loss lines stay true. */
  dropped: Partial<Record<Kind, Dropped>>;
  /** Assistant replies and tool results covered: the digest keeps them only as the lines above. */
  unkept: { assistant: number; tool: number; tokens: number };
}

const SENTENCE_CHARS = 300;
const TIMELINE_CHARS = 120;
const OPEN_TASKS = 12;
const SEQS_PER_FILE = 3;

const APOSTROPHE = "['\u2019]";
const CORRECTION = new RegExp(
  [
    String.raw`\bactually\b`,
    String.raw`\bcorrection\b`,
    String.raw`\bI (?:meant|said)\b`,
    String.raw`^no[,!]\s`,
    String.raw`\bnot\b[^.!?]{1,60}\bbut\b`,
    String.raw`\bthat${APOSTROPHE}?s (?:wrong|not right|incorrect)\b`,
    String.raw`\binstead\b`,
    String.raw`\brather than\b`,
    String.raw`\b(?:don${APOSTROPHE}?t|do not)\b(?! forget)`,
    String.raw`\bstop\b`,
  ].join("|"),
  "i",
);
const DECISION = new RegExp(String.raw`\b(?:decided|let${APOSTROPHE}?s go with|we${APOSTROPHE}ll use|we will|agreed|final answer|going with)\b`, "i");
const TASK = new RegExp(String.raw`\b(?:please|can you|could you|need to|todo|remember to|make sure|don${APOSTROPHE}?t forget)\b|\?$`, "i");
/** Quoted spans with their quote characters: "…", “…”, ‘…’, «…» and `code`. */
const QUOTED = /"[^"\n]+"|\u201c[^\u201d\n]+\u201d|\u2018[^\u2019\n]+\u2019|\u00ab[^\u00bb\n]+\u00bb|`[^`\n]+`/g;
/** Candidate mentions: runs between whitespace, quotes, brackets and list punctuation. */
const MENTION_CANDIDATE = /[^\s"'`<>()[\]{},;|*]+/g;

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
  const covers = `Summary of ${carried ? "earlier history and " : ""}${range(from, to)} (digest; exact quotes and corrections verbatim).`;

  const found = Object.fromEntries(KINDS.map((kind) => [kind, new Map((prior?.items[kind] ?? []).map((item) => [item.text, item]))])) as Record<Kind, Map<string, Item>>;
  const unkept = { ...(prior?.unkept ?? { assistant: 0, tool: 0, tokens: 0 }) };
  for (const message of messages) collect(message, found, unkept);

  const lists = Object.fromEntries(KINDS.map((kind) => [kind, [...found[kind].values()]])) as Record<Kind, Item[]>;
  const dropped: Partial<Record<Kind, Dropped>> = { ...prior?.dropped };
  const drop = (kind: Kind) => {
    const item = lists[kind].shift()!;
    const [low, high] = [Math.min(...item.seqs), Math.max(...item.seqs)];
    const known = dropped[kind];
    dropped[kind] = known ? { count: known.count + 1, from: Math.min(known.from, low), to: Math.max(known.to, high) } : { count: 1, from: low, to: high };
  };
  while (lists.tasks.length > OPEN_TASKS) drop("tasks");

  // The carried summary may take half the budget, so the new messages keep room.
  let earlier = cutTo(carried, Math.floor(maxTokens / 2));
  const render = () =>
    [covers, ...(earlier ? [EARLIER_HEADING, earlier] : []), ...KINDS.flatMap((kind) => (lists[kind].length > 0 ? [HEADINGS[kind], ...lists[kind].map((item) => bullet(kind, item))] : []))].join("\n");
  // Counting line by line (near enough additive across line breaks) keeps dropping linear; the exact count then confirms.
  let over = countTokens(render()) - maxTokens;
  for (const kind of DROP_ORDER) {
    while (over > 0 && lists[kind].length > 0) {
      over -= countTokens(bullet(kind, lists[kind][0]!)) + 1;
      drop(kind);
      if (lists[kind].length === 0) over -= countTokens(HEADINGS[kind]) + 1;
    }
  }
  let text = render();
  for (let excess = countTokens(text) - maxTokens; excess > 0; excess = countTokens(text) - maxTokens) {
    const kind = DROP_ORDER.find((k) => lists[k].length > 0);
    if (kind) drop(kind);
    else if (earlier) {
      const cut = cutTo(earlier, countTokens(earlier) - excess);
      earlier = cut.length < earlier.length ? cut : "";
    } else break;
    text = render();
  }
  if (countTokens(text) > maxTokens) text = "";

  const loss = DROP_ORDER.flatMap((kind) => {
    const d = dropped[kind];
    return d ? [`${d.count} ${DROPPED_NAMES[kind][d.count === 1 ? 0 : 1]} dropped (${range(d.from, d.to)})`] : [];
  });
  if (earlier !== carried) loss.push(earlier ? "the earlier summary was cut to fit" : "the earlier summary was dropped to fit");
  if (unkept.assistant + unkept.tool > 0) {
    loss.push(`${unkept.assistant} assistant replies and ${unkept.tool} tool results (${unkept.tokens.toLocaleString("en-US")} tokens) are not kept beyond the lines above`);
  }
  if (!text) loss.push(`not even the summary's first line fits ${maxTokens} tokens`);
  const state: DigestState = { version: 1, from, to, earlier, items: lists, dropped, unkept };
  return { text, state, loss };
}

/** Adds what one message contributes to each section. */
function collect(message: SummaryInputMessage, found: Record<Kind, Map<string, Item>>, unkept: DigestState["unkept"]): void {
  const { seq, role, content } = message;
  const add = (kind: Kind, text: string, itemRole?: string) => {
    const known = found[kind].get(text);
    if (!known) found[kind].set(text, itemRole ? { text, seqs: [seq], role: itemRole } : { text, seqs: [seq] });
    // A file keeps the first two messages that mention it and the latest.
    else if (kind === "files" && !known.seqs.includes(seq)) known.seqs = [...known.seqs.slice(0, SEQS_PER_FILE - 1), seq];
  };
  const calls = message.toolCalls ?? [];
  for (const text of [content, ...calls.map((call) => call.arguments)]) for (const mention of mentionsIn(text)) add("files", mention);
  for (const name of [...calls.map((call) => call.name), ...(message.toolName ? [message.toolName] : [])]) add("files", `tool: ${clip(name.replace(/\s+/g, " ").trim(), TIMELINE_CHARS)}`);

  if (role === "user") {
    const sentences = sentencesOf(content);
    if (sentences[0]) add("timeline", clip(sentences[0], TIMELINE_CHARS));
    for (const [quote] of content.matchAll(QUOTED)) add("quotes", clip(quote, SENTENCE_CHARS));
    for (const sentence of sentences) {
      const kind = CORRECTION.test(sentence) ? "corrections" : DECISION.test(sentence) ? "decisions" : TASK.test(sentence) ? "tasks" : null;
      if (kind) add(kind, clip(sentence, SENTENCE_CHARS), kind === "decisions" ? role : undefined);
    }
  } else if (role === "assistant") {
    for (const sentence of sentencesOf(content)) if (DECISION.test(sentence)) add("decisions", clip(sentence, SENTENCE_CHARS), role);
    unkept.assistant += 1;
    unkept.tokens += countTokens(content) + calls.reduce((sum, call) => sum + countTokens(call.arguments), 0);
  } else if (role === "tool" && message.denied) {
    // The user's decision, not tool output: the model must not try the call again as if it had never been refused.
    const reason = message.denied.reason === null ? "" : `: ${message.denied.reason.replace(/\s+/g, " ").trim()}`;
    add("decisions", clip(`denied running ${message.toolName ?? "a tool"}${reason}`, SENTENCE_CHARS), "user");
  } else if (role === "tool") {
    unkept.tool += 1;
    unkept.tokens += countTokens(content);
  }
}

function bullet(kind: Kind, item: Item): string {
  if (kind === "files") return `- ${item.text} (${item.seqs.map((seq) => `#${seq}`).join(", ")})`;
  return `- [#${item.seqs[0]}${item.role ? ` ${item.role}` : ""}] ${item.text}`;
}

function range(from: number | null, to: number | null): string {
  if (from === null || to === null) return "no messages";
  return from === to ? `message #${from}` : `messages #${from}–#${to}`;
}

function sentencesOf(text: string): string[] {
  return text
    // Not after single-letter abbreviations (e.g., i.e.).
    .split(/(?<=[.!?])(?<!\b[A-Za-z]\.[A-Za-z]\.)\s+|\n+/)
    .map((sentence) => sentence.replace(/\s+/g, " ").trim())
    .filter((sentence) => sentence !== "");
}

/** File paths, URLs and artifact pointers, in the order they appear. */
function mentionsIn(text: string): string[] {
  return [...text.matchAll(MENTION_CANDIDATE)].map(([token]) => token.replace(/[.:!?]+$/, "")).filter(isMention);
}

function isMention(token: string): boolean {
  if (/^(?:https?:\/\/\w|r2:\/\/artifacts\/.)/i.test(token)) return true;
  if (!/^[\w.~/-]+$/.test(token) || !/[A-Za-z]/.test(token)) return false;
  const extension = /\.[A-Za-z]{1,5}$/.test(token);
  // A slash alone would take "and/or" for a path; rooted, deeper or with an extension it is one.
  if (token.includes("/")) return /^(?:~|\.{1,2})?\//.test(token) || token.split("/").length > 2 || extension;
  // Single letters between dots are abbreviations (e.g., U.S.), not file names.
  return extension && /[A-Za-z]/.test(token.slice(0, token.lastIndexOf("."))) && !/^(?:[A-Za-z]\.)+[A-Za-z]$/.test(token);
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

/** A previous digest's state, read defensively: it comes back from storage. Null when it is not one. */
function readState(value: unknown): DigestState | null {
  if (!isRecord(value) || value.version !== 1 || !isRecord(value.items)) return null;
  const { items, dropped, unkept } = value;
  const seq = (v: unknown) => (Number.isSafeInteger(v) ? (v as number) : null);
  const count = (v: unknown) => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : 0);
  const readDropped = (v: unknown): [Dropped] | [] => {
    if (!isRecord(v) || count(v.count) === 0 || seq(v.from) === null || seq(v.to) === null) return [];
    return [{ count: count(v.count), from: v.from as number, to: v.to as number }];
  };
  const counts = isRecord(unkept) ? unkept : {};
  return {
    version: 1,
    from: seq(value.from),
    to: seq(value.to),
    earlier: typeof value.earlier === "string" ? value.earlier : "",
    items: Object.fromEntries(KINDS.map((kind) => [kind, readItems(items[kind])])) as Record<Kind, Item[]>,
    dropped: Object.fromEntries(KINDS.flatMap((kind) => (isRecord(dropped) ? readDropped(dropped[kind]).map((d) => [kind, d] as const) : []))),
    unkept: { assistant: count(counts.assistant), tool: count(counts.tool), tokens: count(counts.tokens) },
  };
}

/** Valid items as fresh copies, so merging never changes the caller's state. */
function readItems(value: unknown): Item[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    if (!isRecord(item) || typeof item.text !== "string" || item.text.includes("\n")) return [];
    const seqs = Array.isArray(item.seqs) ? item.seqs.filter((s): s is number => Number.isSafeInteger(s)).slice(0, SEQS_PER_FILE) : [];
    if (seqs.length === 0) return [];
    return [typeof item.role === "string" && /^\w+$/.test(item.role) ? { text: item.text, seqs, role: item.role } : { text: item.text, seqs }];
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
