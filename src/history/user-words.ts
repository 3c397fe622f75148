/**
 * The user's words as units a summary can keep or give up one at a time:
 * sentences (long ones as clauses, pasted blocks as lines), each with the kind
 * of fact it carries. The kinds decide only what goes first when a summary is
 * over its budget; while everything fits, everything is kept verbatim. Kinds
 * come from what a sentence holds (a digit, a capitalised name, a quote, a
 * path, a date) more than from how it is phrased, and the few phrasings that
 * matter (corrections, decisions) are recognised in several languages.
 */

/** What a unit carries, the most important first; a unit is named by the first kind it shows. */
export const UNIT_KINDS = ["correction", "decision", "instruction", "quote", "number", "date", "path", "name", "task", "other", "pasted", "filler"] as const;
export type UnitKind = (typeof UNIT_KINDS)[number];

/** Higher is kept longer. Corrections outlast everything; facts of every kind outlast requests, chat and pasted data. */
export const KEEP_RANK: Record<UnitKind, number> = {
  correction: 10,
  decision: 8,
  instruction: 8,
  quote: 8,
  number: 7,
  date: 7,
  path: 7,
  name: 7,
  task: 5,
  other: 3,
  pasted: 2,
  filler: 1,
};

export interface WordUnit {
  text: string;
  kind: UnitKind;
}

/** Past this a sentence is cut at its clauses, so a long ramble does not cost a fact the room it needs. */
const LONG_SENTENCE_CHARS = 220;
/** Past this even a clause is cut at word boundaries. */
const LONG_CLAUSE_CHARS = 400;

// Word boundaries that know letters beyond ASCII (`\b` does not: "décidé" has none at its end).
const B = String.raw`(?<![\p{L}\p{N}_])`;
const E = String.raw`(?![\p{L}\p{N}_])`;
const words = (list: string) => new RegExp(`${B}(?:${list})${E}`, "iu");
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

const INSTRUCTION = words(`always|never|don${A}?t|do not|doesn${A}?t|does not|stop|avoid|must|must not|mustn${A}?t|should|shouldn${A}?t|only|make sure|be sure|ensure|under no circumstances|nie|niemals|immer|jamais|toujours|nunca|siempre|no (?:uses|env[ií]es|hagas)`);
const VERBATIM = words(`verbatim|word for word|word-for-word|exact wording|exactly as|as written|literally|quote|quoted|mot pour mot|w[öo]rtlich|textualmente|al pie de la letra|alla lettera`);
/**
 * Quoted spans: "…", “…”, „…“, «…», ‹…›, 「…」, 『…』, `code`, and '…' or ‘…’ opening after a space or a colon (not an
 * apostrophe); 500 characters at most, so an opener never closed costs a bounded look ahead.
 */
const QUOTED_SPANS = new RegExp(String.raw`"[^"\n]{2,500}"|\u201c[^\u201d\n]{2,500}\u201d|\u201e[^\u201c\u201d\n]{2,500}[\u201c\u201d]|\u00ab[^\u00bb\n]{2,500}\u00bb|\u2039[^\u203a\n]{2,500}\u203a|\u300c[^\u300d\n]{1,500}\u300d|\u300e[^\u300f\n]{1,500}\u300f|\x60[^\x60\n]{1,500}\x60|(?<=^|[\s:(])['\u2018][^'\u2019\n]{2,500}['\u2019](?![\p{L}\p{N}])`, "gu");
const MONTHS = `jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|janvier|f[ée]vrier|mars|avril|mai|juin|juillet|ao[uû]t|septembre|octobre|novembre|d[ée]cembre|januar|februar|m[äa]rz|juni|juli|oktober|dezember|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre`;
const DAYS = `mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bado|domingo`;
const MONTH_NEXT = new RegExp(String.raw`\s+(?:${MONTHS})(?![\p{L}\p{N}_])`, "iuy");
const DATE = words(`${MONTHS}|${DAYS}|today|tomorrow|yesterday|tonight|next (?:week|month|quarter|year)|end of (?:day|week|month|quarter|year)|eod|eow|eom|q[1-4]|h[12]|midnight|aujourd${A}hui|demain|morgen|heute|mañana|hoy`);
const TASK = words(`please|pls|can you|could you|would you|will you|need(?:s)? to|have to|todo|to-do|remember to|don${A}?t forget|let me know|follow up|s${A}il (?:te|vous) pla[iî]t|bitte|por favor|per favore`);
/** A question (any script's question mark) is a request the conversation may still owe an answer to. */
const QUESTION = /[?\uff1f\u037e]\s*$|^[\u00bf]/u;
/** A capitalised word or acronym that is not the unit's first word: a name, a product, a place. */
const NAME = /(?<=[\s,;:(\u2014\u2013/'"\u201c\u00ab\u201e-])(?!(?:I['’](?:m|ll|ve|d)|OK)(?![\p{L}\p{N}]))(?:\p{Lu}[\p{Ll}\p{Lu}\p{N}'’-]*\p{L}|\p{Lu}{2,})/u;
const CAPITALISED_START = /^\P{L}*(\p{Lu}[\p{Ll}\p{Lu}\p{N}'’-]*)/u;
/** Words that start sentences capitalised without naming anything. */
const COMMON_START = words(`i|i${A}m|i${A}ll|i${A}ve|i${A}d|the|a|an|and|but|so|ok|okay|yes|no|we|you|it|this|that|these|those|there|then|also|please|let${A}s|what|when|where|why|how|who|which|can|could|would|will|is|are|do|does|did|my|our|your|for|in|on|at|to|if|just|thanks|thank|sure|great|good|hmm|hi|hello|hey`);
/** Scripts without capitals: any word in them may be a name. */
const UNCASED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Thai}\p{Script=Devanagari}]/u;
const DIGIT = /\p{Nd}/u;
const CURRENCY = /\p{Sc}/u;
/** Starts only where a run of address characters starts: a 100 KB run without an "@" is one attempt, not one a character. */
const EMAIL = /(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+/;
const IMAGE_NOTE = /^\[\d+ images?\]$/;

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
    for (const line of part.split(/\n+/)) {
      const text = line.replace(/\s+/g, " ").trim();
      if (!text) continue;
      if (fenced) units.push({ text, kind: "pasted" });
      else for (const sentence of sentencesOf(text)) for (const piece of clauses(sentence)) units.push({ text: piece, kind: kindOf(piece) });
    }
  }
  return units;
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

const STOP_WORDS = new Set(
  `the and for with that this these those are was were is be been our your their its his her from into onto about not but also all any
  has have had will would can could should must just then than them they you she him who what when where which there here some more
  let lets me my mine myself please make sure sorry wait actually correction correct really`.split(/\s+/),
);

/** The words that say what a sentence is about: names, numbers and words of three letters or more, stop words aside. */
export function contentWords(text: string): Set<string> {
  const found = text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’.-]*[\p{L}\p{N}]|\p{N}/gu) ?? [];
  return new Set(found.filter((w) => (w.length >= 3 || /\p{N}/u.test(w)) && !STOP_WORDS.has(w)));
}

/** The words that name what a sentence is about: capitalised past its first word, with a digit, a path, or in a script without capitals. */
export function distinctiveWords(text: string): Set<string> {
  const found = text.match(/[\p{L}\p{N}][\p{L}\p{N}'’./@-]*[\p{L}\p{N}]|\p{N}/gu) ?? [];
  return new Set(found.filter((w, k) => (k > 0 && /^\p{Lu}/u.test(w)) || /[\p{N}/@]/u.test(w) || UNCASED_SCRIPT.test(w)).map((w) => w.toLowerCase()));
}

/** Whether a sentence states a decision (the digest keeps the assistant's too, below the user's words). */
export function isDecision(text: string): boolean {
  return DECISION.test(text);
}

export function kindOf(text: string): UnitKind {
  if (IMAGE_NOTE.test(text)) return "other";
  if (looksPasted(text)) return "pasted";
  if (CORRECTION.test(text)) return "correction";
  if (DECISION.test(text)) return "decision";
  if (VERBATIM.test(text) || hasQuote(text)) return "quote";
  if (INSTRUCTION.test(text)) return "instruction";
  if (DIGIT.test(text) || CURRENCY.test(text)) return "number";
  if (DATE.test(text)) return "date";
  if (hasPath(text)) return "path";
  if (hasName(text)) return "name";
  if (TASK.test(text) || QUESTION.test(text)) return "task";
  return isSmallTalk(text) ? "filler" : "other";
}

function hasQuote(text: string): boolean {
  QUOTED_SPANS.lastIndex = 0;
  return QUOTED_SPANS.test(text);
}

/** Data rather than prose: a long run mostly of symbols and digits (a log line, JSON, a table row). */
function looksPasted(text: string): boolean {
  if (text.length < 120) return false;
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  return letters / text.replace(/\s/g, "").length < 0.5;
}

function hasName(text: string): boolean {
  if (UNCASED_SCRIPT.test(text) || NAME.test(text)) return true;
  // A first word is capitalised anyway: it names something when it is spelled like a name (GitHub, ACME).
  const first = CAPITALISED_START.exec(text)?.[1];
  return first !== undefined && !COMMON_START.test(first) && /.\p{Lu}/u.test(first);
}

/** File paths, URLs, e-mail addresses and artifact pointers, in the order they appear. */
export function mentionsIn(text: string): string[] {
  return [...text.matchAll(MENTION_CANDIDATE)].map(([token]) => token.replace(/[.:!?]+$/, "")).filter(isMention);
}

function hasPath(text: string): boolean {
  return (text.includes("@") && EMAIL.test(text)) || mentionsIn(text).length > 0;
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

/** Words that make up acknowledgements and greetings, in a few languages. */
const CHAT_WORDS = new Set(
  `ok okay k kk yes yeah yep yup sure fine great good nice cool perfect awesome excellent lovely thanks thank thx ty you u so much very
  sounds looks seems that this it works work right alright all got understood noted gotcha go ahead on continue keep going carry
  please do will hi hello hey morning evening bye cheers lol haha hmm hm ah oh wow yay right then and for me makes sense agreed
  merci oui bien super parfait daccord d'accord danke ja gut genau prima gracias sí si vale bueno perfecto grazie bene`.split(/\s+/),
);

/** An acknowledgement or greeting: two words at most, or nothing but chat words. */
function isSmallTalk(text: string): boolean {
  const wordsIn = text.toLowerCase().match(/[\p{L}\p{N}'’]+/gu) ?? [];
  return wordsIn.length <= 2 || wordsIn.every((w) => CHAT_WORDS.has(w.replace(/’/g, "'")));
}
