/**
 * The write gate: what may become a memory. Pure. Secrets are redacted first
 * and only the redacted text can be stored; then fragments, raw dumps and
 * low-information text are refused, each with a stable reason code, a signal
 * naming the test that fired, and a sentence for a person.
 *
 * It is a coarse sieve for the usual garbage (half a thought, a pasted log, a
 * JSON blob, "ok ok ok"), not a judge of truth: whether a memory is worth
 * keeping is the writer's call, recorded as its trust.
 */
import { redact } from "../protect";
import { MEMORY_DEFAULTS, MEMORY_LIMITS } from "./limits";
import { jaccard, shingles, stem, STOPWORDS, terms, words } from "./text";

export type RefusalReason = "too_long" | "mostly_secrets" | "fragment" | "raw_dump" | "low_information";

export type RefusalSignal =
  | "too_long"
  | "secrets"
  | "too_short"
  | "few_words"
  | "no_verb"
  | "json"
  | "code"
  | "log"
  | "encoded"
  | "long_line"
  | "symbols"
  | "stopwords"
  | "repetitive"
  | "reasoning";

export interface Refusal {
  reason: RefusalReason;
  signal: RefusalSignal;
  detail: string;
}

export type GateResult =
  | { ok: true; text: string; redactions: { rule: string; count: number }[] }
  | { ok: false; refusal: Refusal };

export interface WriteGateOptions {
  maxChars?: number;
  /** Words other than stop words a memory needs. */
  minInformativeWords?: number;
  /** Refuse when redacted secrets make up at least this share of the text. */
  maxSecretShare?: number;
}

const MIN_CHARS = 12;

export function gateWrite(raw: string, options: WriteGateOptions = {}): GateResult {
  const maxChars = options.maxChars ?? MEMORY_LIMITS.textChars;
  const minWords = options.minInformativeWords ?? 3;
  const maxSecretShare = options.maxSecretShare ?? 0.5;
  const input = raw.trim();
  if (input.length > maxChars) return refuse("too_long", "too_long", `a memory is at most ${maxChars} characters; store documents as artifacts`);

  const { text: redacted, hits } = redact(input);
  const spans = mergeSpans(hits.map((h) => [h.offset, h.offset + h.length] as const));
  const secretChars = spans.reduce((n, [from, to]) => n + (to - from), 0);
  const meaningful = input.replace(/\s+/g, "").length;
  if (secretChars > 0 && secretChars >= maxSecretShare * input.length) {
    return refuse("mostly_secrets", "secrets", "the text is mostly secrets (keys, tokens, passwords); nothing was stored");
  }
  // The checks read the text with each secret as one plain word, whatever the redactor's placeholder looks like.
  const text = withoutSpans(input, spans, " secret ");

  if (meaningful < MIN_CHARS) return refuse("fragment", "too_short", `a memory needs at least ${MIN_CHARS} characters to carry a fact`);
  const dump = rawDump(text);
  if (dump) return refuse("raw_dump", dump.signal, dump.detail);
  const low = lowInformation(text);
  if (low) return refuse("low_information", low.signal, low.detail);

  const informative = terms(text).length;
  if (informative < minWords) return refuse("fragment", "few_words", `a memory needs at least ${minWords} words besides stop words; this has ${informative}`);
  if (isLatin(text) && !hasVerb(text)) {
    return refuse("fragment", "no_verb", "this reads as a fragment with no verb; state the fact as a sentence (\"the user prefers …\")");
  }
  return { ok: true, text: redacted, redactions: countRules(hits.map((h) => h.rule)) };
}

/** Word-bigram Jaccard similarity of two texts: 1 for the same words in the same order, whatever the case and punctuation. */
export function similarity(a: string, b: string): number {
  return jaccard(shingles(a), shingles(b));
}

export function isNearDuplicate(a: string, b: string, threshold: number = MEMORY_DEFAULTS.duplicateJaccard): boolean {
  return similarity(a, b) >= threshold;
}

function refuse(reason: RefusalReason, signal: RefusalSignal, detail: string): GateResult {
  return { ok: false, refusal: { reason, signal, detail } };
}

// ── raw dumps ────────────────────────────────────────────────────────────────

const CODE_LINE =
  /(?:[;{}]\s*$|^\s*[{}[\]]|=>|^\s*(?:import|export|const|let|var|function|def|class|return|public|private|protected|package|#include|using|fn|func|SELECT|INSERT|UPDATE|CREATE)\b[^.!?]*[=({:;]|\)\s*\{|^\s*(?:if|for|while|switch)\s*\()/;
const LOG_LINE =
  /^\s*(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?\d{2}:\d{2}:\d{2}|\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL)\]?[\s:]|at \S+ \(.*:\d+:\d+\)|at \S+:\d+|Traceback \(most recent call last\)|File ".*", line \d+)/;
const ENCODED = /[A-Za-z0-9+/_-]{32,}={0,2}/g;
const URL = /^https?:\/\/\S+$/;
const SYMBOL = /[^\p{L}\p{M}\p{N}\s.,;:'’"“”!?()\-–—/&%]/gu;

function rawDump(text: string): { signal: RefusalSignal; detail: string } | null {
  const trimmed = text.trim();
  if (/^[{[]/.test(trimmed) && (parsesAsJson(trimmed) || (trimmed.match(/"[^"\n]{1,64}"\s*:/g)?.length ?? 0) >= 2)) {
    return { signal: "json", detail: "this is JSON; a memory is a sentence about what matters in it" };
  }
  if ((text.match(/"[^"\n]{1,64}"\s*:\s*["{[\d tfn]/g)?.length ?? 0) >= 3) {
    return { signal: "json", detail: "this is mostly JSON; a memory is a sentence about what matters in it" };
  }
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  const logLines = lines.filter((l) => LOG_LINE.test(l)).length;
  if (logLines > 0 && logLines * 2 >= lines.length) return { signal: "log", detail: "this is log output; remember the conclusion drawn from it instead" };
  const codeLines = lines.filter((l) => CODE_LINE.test(l)).length;
  const braces = text.match(/[{};]/g)?.length ?? 0;
  if ((lines.length >= 2 && codeLines * 2 >= lines.length) || (codeLines >= 1 && braces >= 4 && braces >= text.length * 0.03)) {
    return { signal: "code", detail: "this is source code; remember what it means or where it lives instead" };
  }
  const nonSpace = text.replace(/\s+/g, "").length || 1;
  const encoded = [...text.matchAll(ENCODED)].filter((m) => /[\d+/=]/.test(m[0]) && !/^[a-z]+$/i.test(m[0])).reduce((n, m) => n + m[0].length, 0);
  if (encoded >= 0.3 * nonSpace) return { signal: "encoded", detail: "this is mostly base64 or hex data" };
  for (const token of text.split(/\s+/)) {
    if (token.length > 80 && !(URL.test(token) && token.length <= 300)) return { signal: "long_line", detail: "this has an unbroken run of more than 80 characters" };
  }
  for (const line of lines) {
    if (line.length > 600 && (line.match(/\s/g)?.length ?? 0) < line.length / 25) return { signal: "long_line", detail: "this has a very long line with few spaces" };
  }
  const symbols = text.match(SYMBOL)?.length ?? 0;
  if (symbols > 0.25 * nonSpace) return { signal: "symbols", detail: `${Math.round((100 * symbols) / nonSpace)} % of the characters are symbols` };
  return null;
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

// ── low information ──────────────────────────────────────────────────────────

/** An agent thinking aloud ("Let me check…", "Hmm, maybe…"): the step, not its conclusion. */
const REASONING =
  /^\s*(?:let me|let's (?:see|check|try|look)|i(?:'ll| will| need to| should| think i| am going to|'m going to) (?:check|look|try|see|verify|investigate|figure)|hmm+\b|wait,|okay,? so\b|now i(?:'ll| will| need)|first,? i(?:'ll| will| need)|maybe i should)/i;

function lowInformation(text: string): { signal: RefusalSignal; detail: string } | null {
  const all = words(text);
  const informative = all.filter((w) => !STOPWORDS.has(w) && /\p{L}/u.test(w) && [...w].length > 1);
  if (all.length > 0 && informative.length === 0) return { signal: "stopwords", detail: "this has only stop words and numbers" };
  if (REASONING.test(text)) return { signal: "reasoning", detail: "this reads as a step of reasoning, not a conclusion; remember what was concluded" };
  if (/(\S)\1{7,}/u.test(text) || /(\S.{1,19}?)\1{4,}/u.test(text)) return { signal: "repetitive", detail: "this repeats the same characters or words" };
  if (all.length >= 6 && new Set(all).size / all.length < 0.4) return { signal: "repetitive", detail: "most of its words are repeats" };
  const stems = informative.map(stem);
  if (stems.length >= 6 && new Set(stems).size / stems.length < 0.4) return { signal: "repetitive", detail: "most of its words are repeats" };
  return null;
}

// ── fragments ────────────────────────────────────────────────────────────────

/** Common verbs (base forms); "prefers", "preferred", "preferring" reach them through `stem`. */
const VERBS: ReadonlySet<string> = new Set(
  (
    "be is are was were am been being has have had do does did done can could will would shall should may might must " +
    "use prefer like love hate want need work live know think say tell ask go went gone come came make made take took give gave get got " +
    "see saw seen look find found keep kept run ran build built deploy write wrote read call move start stop finish plan decide agree allow " +
    "avoid require expect include contain depend mean meant seem become became remain meet met schedule book send sent receive pay paid buy " +
    "bought sell sold own hold held lead led manage help choose chose pick switch migrate install configure enable disable set store save " +
    "delete remove add create update change fix break broke fail succeed test review merge release ship publish support speak spoke learn " +
    "teach taught study eat ate drink drank sleep slept wake woke travel visit stay leave left arrive return join open close turn show hide " +
    "follow sign track report approve reject block handle process target host serve cache commit push pull fetch share post reply respond " +
    "note remember forget forgot mention describe explain recommend suggest insist refuse accept try feel felt enjoy dislike celebrate born " +
    "drive drove ride rode walk email phone wear wore cook play watch listen sing draw design name rename sort format compile bundle reach " +
    "contact owe cost earn spend spent rent marry graduate retire prefer begin began end let put bring brought understand understood " +
    "believe consider continue provide rely replace require run prevent protect ensure check verify confirm measure limit exceed increase " +
    "reduce lower raise improve document describe own belong consist appear happen occur seem stand sit lie win won lose lost send"
  ).split(" "),
);

function hasVerb(text: string): boolean {
  if (/\b\p{L}+['’](?:s|m|re|ve|d|ll|t)\b/iu.test(text)) return true; // it's, I'm, don't, they've
  if (/\b[\p{L}][\p{L}\p{N} _-]{0,40}:\s+\S/u.test(text)) return true; // "timezone: Europe/Berlin" reads as "is"
  if (/\b(?:the user|user|i|we|they|he|she|you)\s+(?!(?:the|a|an|and|or|of|to|in|on)\b)[a-z]{3,}/i.test(text)) return true; // "the user bakes …": a subject, then its verb
  for (const word of words(text)) {
    if (VERBS.has(word) || VERBS.has(stem(word))) return true;
    if (/^[a-z]{3,}(?:ed|ing|ize|ise|ify|izes|ises|ifies)$/.test(word)) return true;
    if (word.endsWith("s") && VERBS.has(word.slice(0, -1))) return true;
  }
  return false;
}

/** The verb test only makes sense for text in a Latin script. */
function isLatin(text: string): boolean {
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  const latin = text.match(/\p{Script=Latin}/gu)?.length ?? 0;
  return letters > 0 && latin / letters >= 0.7;
}

// ── helpers ──────────────────────────────────────────────────────────────────

function mergeSpans(spans: readonly (readonly [number, number])[]): [number, number][] {
  const sorted = [...spans].filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [from, to] of sorted) {
    const last = out.at(-1);
    if (last && from <= last[1]) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

function withoutSpans(text: string, spans: readonly [number, number][], replacement: string): string {
  let out = "";
  let at = 0;
  for (const [from, to] of spans) {
    out += text.slice(at, from) + replacement;
    at = to;
  }
  return out + text.slice(at);
}

function countRules(rules: readonly string[]): { rule: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const rule of rules) counts.set(rule, (counts.get(rule) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([rule, count]) => ({ rule, count }));
}
