/**
 * The user's words as units a summary can keep or give up one at a time:
 * sentences (long ones as clauses, pasted blocks as lines), each named by the
 * kind of thing it holds. What a unit is worth is its information
 * (`information.ts`); the kind only names what a loss note counts, and is read
 * from what the unit holds (a quote, a path, a date, an amount, a name), never
 * from how it is phrased. The one phrasing read at all is a correction's
 * ("No wait, …", "…, not Tuesday"): it keeps a correction that does not name
 * its subject beside the sentence that does, and breaks ties.
 */
import { entitiesOf, fold, isCommon, QUOTED_SPANS, type EntityShape } from "./information";

/** What a unit holds, for the loss notes; `correction` is the digest's finding (it updates an earlier unit), never read from wording. */
export const UNIT_KINDS = ["correction", "quote", "path", "date", "number", "name", "question", "other", "pasted", "filler"] as const;
export type UnitKind = (typeof UNIT_KINDS)[number];

export interface WordUnit {
  text: string;
  kind: UnitKind;
}

/** Past this a sentence is cut at its clauses, so a ramble around a fact costs the fact no room. */
const LONG_SENTENCE_CHARS = 160;
/** Past this even a clause is cut at word boundaries. */
const LONG_CLAUSE_CHARS = 400;

// Word boundaries that know letters beyond ASCII (`\b` does not: "décidé" has none at its end).
const B = String.raw`(?<![\p{L}\p{N}_])`;
const E = String.raw`(?![\p{L}\p{N}_])`;
const A = "['\u2019]";

const CORRECTION = new RegExp(
  [
    // English
    `${B}(?:actually|correct(?:ion|ed|ing)?|correct myself|misspoke|mis-?typed|typo|oops|scratch that|strike that|disregard|my (?:bad|mistake)|on second thought|changed my mind|turns out|let me rephrase|to clarify|clarification|no longer|not any ?more|instead|rather than|revised?|amended?|supersedes?|replaces?)${E}`,
    `${B}I (?:meant|mean|said|was wrong|got (?:that|it|this) wrong|made a mistake)${E}`,
    `${B}(?:that|this|it)${A}?s? (?:is |was )?(?:wrong|not right|incorrect|outdated|out of date|a mistake|an error|not correct)${E}`,
    `${B}(?:got|had) (?:that|it|this|those|these) (?:wrong|backwards|mixed up)${E}`,
    `${B}(?:ignore|forget|disregard)${E}`,
    `${B}(?:should|must) (?:be|read|say)${E}`,
    `${B}make (?:that|it)${E}`,
    `${B}(?:change of plans?|plans? changed?|new plan|heads up)${E}`,
    // "at 15:30 not 10:00", "Not 22 people — 8 people"
    String.raw`(?<![\p{L}\p{N}_])not \p{N}`,
    String.raw`(?<![\p{L}\p{N}_])(?:chang|switch|mov|push|bump|shift|updat|rais|lower|increas|decreas|reduc|extend|postpon|delay|reschedul|renam|relocat|cut)(?:e|es|ed|ing|s)? (?:\S+ ){0,4}?(?:to|from|into|back)(?![\p{L}\p{N}_])`,
    // "No, …" and "No wait …" open a correction; "No rush" does not.
    String.raw`^(?:(?:oh|hmm+|ah|uh|um|erm|well|ok|okay)[,!.]?\s+)?(?:no\s*[,.!:;\u2014\u2013-]|no wait|no no|nope|wait|sorry|hold on|erm|err|um|no(?=\s+(?:the|it|its|it's|that|we|i)\b))(?![\p{L}\p{N}_])`,
    `${B}not (?:\\S+ ){0,8}?but${E}`,
    // "Thursday, not Tuesday", "le 14, pas le 12", "3500, nicht 3000", "el martes, no el lunes"
    `[,;(\u2014\u2013-]\\s*(?:and |et |und |y |e )?(?:not|pas|nicht|no|non|n[aã]o)${E}`,
    String.raw`\u2192|->|=>`,
    // French, German, Spanish, Italian, Portuguese
    `${B}(?:en fait|plut[oô]t|je voulais dire|je me suis tromp[ée]e?|erreur|au lieu de|finalement|pas .{1,60} mais|oublie[sz]?)${E}`,
    `${B}(?:eigentlich|korrektur|ich meinte|stattdessen|statt|falsch|vergiss|nicht .{1,60} sondern|doch nicht|stimmt nicht|moment)${E}`,
    `${B}(?:c${A}est faux|ce n${A}est pas|no es (?:correcto|as[ií])|eso no es|non [èe] (?:giusto|corretto))${E}`,
    `${B}(?:en realidad|correcci[oó]n|quise decir|me equivoqu[ée]|en vez de|mejor dicho|perd[oó]n|no .{1,60} sino|olvida)${E}`,
    `${B}(?:anzi|in realt[aà]|volevo dire|ho sbagliato|invece di|na verdade|quis dizer|errei|em vez de)${E}`,
    // Japanese, Chinese
    String.raw`ではなく|じゃなくて|じゃなく|訂正|間違い|実は|ではありません|不是|而是|更正|改成|其实`,
  ].join("|"),
  "iu",
);

const DECISION = new RegExp(
  [
    `${B}(?:decided|decide|decision|decisions|final call|final answer|settled|agreed|we agree|going forward|from now on|henceforth|the plan is|plan is to|we${A}?(?:ll| will| are going| re going)|let${A}?s (?:go|use|do|pick|keep|stick|ship|make)|go(?:ing)? with|stick(?:ing)? with|opt(?:ing)? for|chose|choose|chosen|approved?|confirmed?|sign(?:ed)? off|locked in|lock it in|done deal|it${A}?s final|final(?:ly)? decided)${E}`,
    `${B}(?:on part sur|on garde|d[ée]cid[ée]e?s?|d[ée]cision|on va|entschieden|entscheidung|wir nehmen|wir machen|beschlossen|decidimos|decidido|decisi[oó]n|vamos con|nos quedamos con|abbiamo deciso|decidimos)${E}`,
    String.raw`決定|決めました|にします|决定`,
  ].join("|"),
  "iu",
);

const IMAGE_NOTE = /^\[\d+ images?\]$/;
const MONTH_NEXT = new RegExp(String.raw`\s+(?:jan|feb|m[aä]r|apr|may|mai|jun|jul|aug|sep|oct|okt|nov|dec|dez|janv|f[ée]v|avr|juil|ao[uû]|d[ée]c)\p{L}*(?![\p{L}\p{N}_])`, "iuy");

/** The user's message as units, in order. Fenced blocks are pasted data, a line each. */
export function userUnits(message: string): WordUnit[] {
  const units: WordUnit[] = [];
  const parts = message.split(/^(```|~~~)[^\n]*$/m);
  let fenced = false;
  for (const part of parts) {
    if (part === "```" || part === "~~~") {
      fenced = !fenced;
      continue;
    }
    const lines = part.split(/\n+/);
    const logged = logLines(lines);
    const mail = mailQuotes(lines);
    lines.forEach((line, k) => {
      const text = line.replace(/\s+/g, " ").trim();
      if (!text) return;
      if (fenced || logged.has(k) || tableRow(line)) units.push({ text, kind: "pasted" });
      else {
        const mailed = mail.has(k) ? text.replace(MAIL_MARK, "") : null;
        if (mailed === "") return;
        for (const sentence of sentencesOf(mailed ?? text)) {
          const quoted = mailed !== null ? [sentence] : quotedSentences(sentence);
          if (quoted) for (const part of quoted) units.push({ text: part, kind: "pasted" });
          else for (const piece of clauses(sentence)) units.push({ text: piece, kind: kindOf(piece) });
        }
      }
    });
  }
  return units;
}

/**
 * A table's row (data the user brought, read as a pasted line is): a Markdown row (`| Dana | launch |`), cells set apart
 * by two pipes or more in a line that no sentence stop or colon breaks (`p7 | bin strike ballot | Hallow End`; not
 * "Pick one: red | green | blue" or a shell pipeline in a sentence), or by tabs or columns of spaces, two gaps or more,
 * each after a word rather than a sentence's stop (`Holt Cross loop     3648  18.1%`; not prose typed with two spaces
 * after each full stop).
 */
function tableRow(line: string): boolean {
  if (/^\s*\|.*\|\s*$/.test(line)) return true;
  if ((line.match(/\s\|\s/g) ?? []).length >= 2 && !/[.!?;:](?:\s|$)/.test(line)) return true;
  return (line.match(/[^\s.!?;:,](?:\t+| {2,})(?=\S)/g) ?? []).length >= 2;
}

/** A line quoted as mail quotes it (`> …`, or `>` alone between its paragraphs; not "> 200 errors", a comparison). */
const MAIL_LINE = /^\s*>(?:\s+(?![\d=<>])|\s*$)/;
/** The quote mark and the space after it. */
const MAIL_MARK = /^\s*>\s*/;

/**
 * The lines of mail someone else wrote, quoted: a run of lines quoted as mail quotes them (bare `>` lines between
 * its paragraphs included) that holds two lines of text or more, or one of more than one sentence ("> Nell: Still no
 * reply. I'll be contacting IPSO by Monday."). A sentence the user set in a quote to keep its wording ("> The map is
 * not the territory (but it helps)." then "that's the wording legal approved") stays theirs.
 */
function mailQuotes(lines: readonly string[]): Set<number> {
  const quoted = new Set<number>();
  for (const [from, to] of runsOf(lines, (line) => MAIL_LINE.test(line))) {
    const texts = lines.slice(from, to).map((line) => line.replace(MAIL_MARK, "")).filter(Boolean);
    if (texts.length >= 2 || (texts.length === 1 && sentencesOf(texts[0]!).length > 1)) for (let i = from; i < to; i++) quoted.add(i);
  }
  return quoted;
}

/** A quotation is someone else's text, not a phrase to keep, past this many characters and one sentence. */
const PASTED_QUOTE_CHARS = 80;

/**
 * Someone else's text set in the user's message in quotes: a quotation of more than one sentence and more than
 * `PASTED_QUOTE_CHARS` characters that makes up at least half its sentence (a pasted draft, a pitch, an email, a text
 * to translate). Its sentences, without the marks, are pasted data. A quote the user asks to keep ("the headline must
 * read exactly …", a tagline of three short sentences) is shorter, or a part of their own words. Single quotes are
 * also apostrophes, and are not read.
 */
function quotedSentences(sentence: string): string[] | null {
  for (const m of sentence.matchAll(QUOTED_SPANS)) {
    if (/^['\u2018`]/.test(m[0])) continue;
    const inner = m[0].slice(1, -1);
    if (m[0].length * 2 < sentence.length || inner.length <= PASTED_QUOTE_CHARS) continue;
    const sentences = sentencesOf(inner);
    if (sentences.length > 1) return sentences;
  }
  return null;
}

/** A line that starts with a time of day or a date, as a log's, an alarm panel's or a console's lines do. */
// Its end is no digit rather than a word boundary: an ISO timestamp's date runs into its "T" (`[2024-02-09T19:10:00Z]`).
const STAMPED = /^\s*\[?(?:\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}|\d{1,2}:\d{2}(:\d{2})?)(?!\d)/;

/**
 * Whether a stamped line is a machine's: its time is to the second or after a date, or the rest of it is written in
 * capitals (`23:52 FAULT LOOP 2 DEVICE 034`). A person's agenda ("09:00 standup with Dana") is neither.
 */
function machineLine(line: string): boolean {
  const stamp = STAMPED.exec(line);
  if (!stamp) return false;
  if (stamp[1] !== undefined || !/^\s*\[?\d{1,2}:/.test(line)) return true;
  // A chat transcript's line: a time, then who said it (`[11:36] Callum: There's a spare bow`).
  if (/^\s*\[?\d{1,2}:\d{2}(?::\d{2})?\]?\s*(?:-\s*)?\p{Lu}[\p{L}\p{M}'.-]*(?: \p{Lu}[\p{L}\p{M}'.-]*){0,2}:\s/u.test(line)) return true;
  const letters = line.slice(stamp[0].length).match(/\p{L}/gu) ?? [];
  return letters.length > 0 && letters.filter((c) => c !== c.toLowerCase()).length / letters.length >= 0.6;
}

/**
 * The lines of a pasted log, unfenced: three or more machine lines in a row (`machineLine`). They are the machine's
 * record, pasted for the assistant to read, not what the user said; a line or two so stamped stays the user's.
 */
function logLines(lines: readonly string[]): Set<number> {
  const logged = new Set<number>();
  for (const [from, to] of runsOf(lines, machineLine)) if (to - from >= 3) for (let i = from; i < to; i++) logged.add(i);
  return logged;
}

/** The runs of lines in a row that pass `test`, each as [its first line, the line after its last]. */
function runsOf(lines: readonly string[], test: (line: string) => boolean): [number, number][] {
  const runs: [number, number][] = [];
  for (let k = 0; k < lines.length; ) {
    let end = k;
    while (end < lines.length && test(lines[end]!)) end++;
    if (end > k) runs.push([k, end]);
    k = end > k ? end : k + 1;
  }
  return runs;
}

/** Sentences of one line: after . ! ? … (and their full-width forms), not after an abbreviation, a decimal point or inside a path. */
export function sentencesOf(line: string): string[] {
  const out: string[] = [];
  let start = 0;
  // Spans and what follows a stop are read in place (sticky, bounded tails): a long line costs linear time.
  const quoted = [...line.matchAll(QUOTED_SPANS)].map((q) => [q.index, q.index + q[0].length] as const);
  let q = 0;
  const follows = (re: RegExp, at: number) => {
    re.lastIndex = at;
    return re.test(line);
  };
  for (const match of line.matchAll(STOPS)) {
    const end = match.index + match[0].length;
    const fullWidth = /^[\u3002\uff01\uff1f]/u.test(match[0]);
    if (!fullWidth && !follows(TEXT_NEXT, end)) continue;
    // A quotation is kept whole: "Welcome back! Your drafts are here." is one thing the user asked to keep.
    while (q < quoted.length && quoted[q]![1] <= end) q++;
    if (q < quoted.length && quoted[q]![0] < match.index) continue;
    // Nor does a stop that a lowercase word follows end a sentence: "…," she said "Stop." and left.
    if (follows(LOWER_NEXT, end) && /["'\u201d\u2019\u00bb)]$/.test(match[0])) continue;
    const tail = line.slice(Math.max(start, match.index - 24), match.index);
    // Nor does a German or Scandinavian ordinal date: "am 7. April".
    if (match[0] === "." && /(?:^|\s)\d{1,2}$/.test(tail) && follows(MONTH_NEXT, end)) continue;
    // "e.g.", "Dr.", "U.S." and a lone initial end no sentence.
    if (match[0] === "." && ABBREVIATION_END.test(tail)) continue;
    out.push(line.slice(start, end).trim());
    start = end;
  }
  out.push(line.slice(start).trim());
  return out.filter((s) => s !== "");
}

const STOPS = /[.!?\u2026]+["'\u201d\u2019\u00bb)\]]*|[\u3002\uff01\uff1f]+[\u300d\u300f\uff09]*/gu;
const TEXT_NEXT = /\s+\S/y;
const LOWER_NEXT = /\s+\p{Ll}/uy;
const ABBREVIATION_END = /(?:^|[\s(])(?:\p{L}|e\.g|i\.e|etc|vs|cf|dr|mr|mrs|ms|st|no|nr|approx|ca|incl|fig|p|pp|vol|(?:\p{L}\.)+\p{L})$/iu;

/** A long sentence as clauses (at , ; : and dashes), a very long clause at word boundaries. */
function clauses(sentence: string): string[] {
  if (sentence.length <= LONG_SENTENCE_CHARS) return [sentence];
  const pieces: string[] = [];
  let current = "";
  for (const piece of sentence.split(/(?<=[,;:\uff0c\u3001])\s+|\s+(?=[\u2014\u2013]\s)/u)) {
    if (current && current.length + piece.length + 1 > LONG_SENTENCE_CHARS) {
      pieces.push(current);
      current = piece;
    } else current = current ? `${current} ${piece}` : piece;
  }
  if (current) pieces.push(current);
  return pieces.flatMap((piece) => (piece.length <= LONG_CLAUSE_CHARS ? [piece] : wordChunks(piece)));
}

function wordChunks(text: string): string[] {
  const chunks: string[] = [];
  let current = "";
  for (const word of text.split(" ")) {
    if (current && current.length + word.length + 1 > LONG_SENTENCE_CHARS) {
      chunks.push(current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  if (current) chunks.push(current);
  // A single word longer than a chunk (a pasted token) is kept whole: cutting it would change it.
  return chunks;
}

/** Whether a sentence states a decision (the digest keeps the assistant's, below the user's words). */
export function isDecision(text: string): boolean {
  return DECISION.test(text);
}

/** Whether a sentence is phrased as a correction: it keeps a correction that names no subject beside the one that does, and breaks ties. */
export function soundsLikeCorrection(text: string): boolean {
  return CORRECTION.test(text);
}

/** What a unit holds: its first entity's shape, else a question, small talk (common words only) or other. */
export function kindOf(text: string): UnitKind {
  if (IMAGE_NOTE.test(text)) return "other";
  if (looksPasted(text)) return "pasted";
  const shapes = new Set(entitiesOf(text).map((e) => e.shape));
  const shape = SHAPE_ORDER.find((s) => shapes.has(s));
  if (shape) return shape;
  if (QUESTION.test(text)) return "question";
  return isSmallTalk(text) ? "filler" : "other";
}

/** The shape that names a unit holding several: a quote before a path, before a date, a number, a name. */
const SHAPE_ORDER: readonly EntityShape[] = ["quote", "path", "date", "number", "name"];

/** A question (any script's question mark). */
const QUESTION = /[?\uff1f\u037e]\s*$|^[\u00bf]/u;

/** Data rather than prose: a long run mostly of symbols and digits (a log line, JSON, a table row). */
function looksPasted(text: string): boolean {
  if (text.length < 120) return false;
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  return letters / text.replace(/\s/g, "").length < 0.5;
}

/** File paths, URLs, e-mail addresses and artifact pointers, in the order they appear. */
export function mentionsIn(text: string): string[] {
  return [...text.matchAll(MENTION_CANDIDATE)].map(([token]) => token.replace(/[.:!?]+$/, "")).filter(isMention);
}

/** Candidate mentions: runs between whitespace, quotes, brackets and list punctuation. */
const MENTION_CANDIDATE = /[^\s"'`<>()[\]{},;|*]+/g;

function isMention(token: string): boolean {
  if (/^(?:https?:\/\/\w|r2:\/\/artifacts\/.)/i.test(token)) return true;
  if (!/^[\w.~/-]+$/.test(token) || !/[A-Za-z]/.test(token)) return false;
  const extension = /\.[A-Za-z]{1,5}$/.test(token);
  // A slash alone would take "and/or" for a path; rooted, deeper or with an extension it is one.
  if (token.includes("/")) return /^(?:~|\.{1,2})?\//.test(token) || token.split("/").length > 2 || extension;
  // Single letters between dots are abbreviations (e.g., U.S.), not file names.
  return extension && /[A-Za-z]/.test(token.slice(0, token.lastIndexOf("."))) && !/^(?:[A-Za-z]\.)+[A-Za-z]$/.test(token);
}

/** An acknowledgement or greeting: two words at most, or only the commonest words of any text ("ok thanks", "sounds good"). */
function isSmallTalk(text: string): boolean {
  const words = fold(text).match(/[\p{L}\p{N}']+/gu) ?? [];
  return words.length <= 2 || (words.length <= 6 && words.every(isCommon));
}
