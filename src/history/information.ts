/**
 * How much a sentence of the user's tells, measured against the conversation it is in. A word the user writes in
 * every other message ("tests", "deploy", "please") tells little; a word said once ("Kestrel", "8443",
 * "migrations/0017_add_ledger_index.sql") tells a lot. So a unit's information is the sum, over its distinct terms,
 * of each term's inverse document frequency among the user's sentences, with two priors that need no tuning to a
 * corpus: the most frequent words of ordinary English (and of the other languages users write in) weigh a fifth,
 * whatever the conversation; and entities — numbers with a unit or a currency, dates and times, paths, URLs and
 * identifiers, quoted spans, names capitalised inside a sentence — count twice, once as their words and once as a
 * whole (in proportion to their length, as a longer value is one of more possible values), since a summary that
 * keeps "June" without "9" has kept nothing.
 *
 * No phrasing decides anything here: "can you", "should", "tomorrow" are ordinary words and weigh like them.
 */

import { stem } from "../core/stem";
import { COMMON_WORDS } from "../core/common-words";
import { DATE, DAY_OR_MONTH } from "./date-shapes";

/**
 * A unit's terms, each once: its words (lowercased, accents folded), its entities (`§shape:text`), and its two-word
 * phrases of longer words, which name a subject common words make up ("welcome email subject") but carry no
 * information of their own beyond their words.
 */
export interface Terms {
  words: string[];
  entities: string[];
  phrases: string[];
  /** The sentence's canonical form: its words in order, each entity and number as its shape ("can you check line # of §path"). */
  form: string;
  /** The numbers the form's `#`s stand for, in order. */
  numbers: string[];
}

/** What an entity of each shape looks like, the first that matches naming it. */
const ENTITY_SHAPES = ["quote", "path", "date", "number", "name"] as const;
export type EntityShape = (typeof ENTITY_SHAPES)[number];

/** Common words weigh this share of a rare word: present, but never what makes a sentence worth keeping. */
const COMMON_WEIGHT = 0.2;
/** Text without spaces is read two characters at a time, each pair overlapping the next: a pair is about half a word. */
const PAIR_WEIGHT = 0.5;
/** About a token's worth of characters: an entity weighs once for every this many characters in it past the first. */
const ENTITY_CHARS = 4;
/** An entity as a whole weighs this many times its inverse frequency, on top of its words. */
const ENTITY_WEIGHT = 2;

/**
 * The most frequent words of ordinary language: English's commonest (common-words.ts, from a frequency list of web
 * text) and the commonest of French, German, Spanish, Portuguese and Italian, with the words of conversation a list
 * of written text ranks lower (contractions, "tomorrow", "sorry", "yeah"). A frequency prior, not a list of
 * phrasings: request and time words are here because they are common, and weigh no differently from "the".
 */
const COMMON = new Set(
  `${COMMON_WORDS}
  a about above after again against ago all almost along already also although always am among an and another any anyone
  anything are around as ask asked at away back be because become been before began being below best better between big
  both bring but by call came can cannot can't case change check come could couldn't day days did didn't different do does
  doesn't doing done don't down during each early either else end enough even ever every everyone everything example
  far feel few find first for found four from full further gave get gets getting give given go goes going gone good got
  great had hadn't half has hasn't have haven't having he help her here hers him his hold home how however i i'd if i'll
  i'm in into is isn't it its it's itself i've just keep kind knew know known large last later least left less let let's
  like likely line little long look looks lot lots made main make makes making many may maybe me mean might mind mine
  more most much must my myself need needs never new next no nor not nothing now number of off often oh ok okay old on
  once one only open or other others our ours out over own part people place please point put quite rather re really
  right run said same saw say says second see seem seems seen set several shall she should shouldn't show side since
  small so some someone something sometimes soon still stop such sure take taken tell than thank thanks that that's the
  their theirs them then there there's these they they're thing things think third this those though three through time
  times to today together told tomorrow too took toward try trying turn two under until up upon us use used using very
  want wanted was wasn't way we week weeks well we'll went were we're weren't what what's when where whether which while
  who whole whom whose why will with within without won't work would wouldn't yes yesterday yet you you'd you'll your
  you're yours yourself year years hour hours minute minutes morning afternoon evening tonight month months moment
  thing again actually also anyway bit can could would should let's sure fine great thanks cool nice hi hello hey yeah
  yep sorry wait still already quick quickly maybe probably definitely just real really pretty very super little bit
  ahead alright anyway awesome cheers lol haha hmm nope oops please thx yup
  le la les un une des du de et est en que qui dans pour pas sur au aux avec ce cette il elle nous vous ils on mais ou
  son sa ses ne se plus par je tu me te lui leur y à été être avoir fait très aussi bien comme tout
  der die das und ist nicht ein eine zu den mit von sich des auf für im dem es auch als an wir ich sie er noch wie aus
  bei nach wird sind oder aber so wenn nur kann mal schon
  el los las del y en un una que es por con para se al lo como más pero sus le ya o este sí porque esta muy también
  o os as do da dos das em um uma para com não por mais é ao na no se você
  il lo gli di che è per una con non sono ma come anche più`
    .split(/\s+/)
    .filter(Boolean)
    .map(fold),
);

/** Quoted spans: "…", “…”, „…“, «…», 「…」, 『…』, `code`, and '…' opening after a space or a colon; 500 characters at most. */
export const QUOTED_SPANS = new RegExp(String.raw`"[^"\n]{2,500}"|\u201c[^\u201d\n]{2,500}\u201d|\u201e[^\u201c\u201d\n]{2,500}[\u201c\u201d]|\u00ab[^\u00bb\n]{2,500}\u00bb|\u300c[^\u300d\n]{1,500}\u300d|\u300e[^\u300f\n]{1,500}\u300f|\x60[^\x60\n]{1,500}\x60|(?<=^|[\s:(])['\u2018][^'\u2019\n]{2,500}['\u2019](?![\p{L}\p{N}])`, "gu");
/**
 * A channel, handle or tag (`#ops-alerts`, `@dana`); a URL or an e-mail address; a run with a slash, a backslash, a dot, an underscore or a colon between word
 * characters (paths, files, hosts, identifiers, key prefixes); a hyphenated identifier with a digit (`cache-east-2`),
 * an acronym (`INV-EU-`) or of three parts or more (`rowan-events-dlq`, where "off-by-one" is refused for its common
 * words). Each
 * alternative starts only where a run starts, so a 100 KB run is one attempt, not one per character.
 */
const PATHLIKE = /(?<![\p{L}\p{N}&])[#@][\p{L}_][\p{L}\p{N}_.-]*[\p{L}\p{N}]|https?:\/\/[^\s<>"'`)\]]+|(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+|(?<![\p{L}\p{N}_-])[~.]?[\p{L}\p{N}_-]*(?:[/\\._:][\p{L}\p{N}_-]+)+[/:]?|(?<![\p{L}\p{N}])[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)+/gu;
/**
 * A number that says how much: with a currency sign or code, a percent sign, or a unit written beside it (letters
 * of a unit's length: "25 MB", "250ms", "3 boxes", "12 seats"); one of three or more digits, which is rarely small
 * talk; or a currency named alone ("billed in US dollars"), an amount's unit. "2 more tests" has none of these.
 */
const AMOUNT = /[\p{Sc}]\s?\d[\d.,\u202f\u00a0 ]*\d|[\p{Sc}]\s?\d|\d[\d.,\u202f\u00a0]*\s?(?:%|[\p{Sc}])|\b(?:usd|eur|gbp|chf|jpy)\s?\d[\d.,]*|\d[\d.,]*\s?(?:usd|eur|gbp|chf|jpy|euros?|dollars?|pounds?|yen)\b|\b\d+(?:[.,]\d+)?[\s-]?(?:ms|s|sec|secs|min|mins|h|hrs?|kb|mb|gb|tb|kib|mib|gib|px|pt|em|rem|k|m|x|rps|qps|req|cores?|vcpus?|nodes?|pods?|replicas?|seats?|users?|rows?|days?|weeks?|months?|years?|hours?|minutes?|seconds?|items?|tokens?|steps?|retries|attempts?|boxes|pages?|people|persons|per\s?cent|percent|°c|°f|km|kg|mg|ml|l)\b|\b\d{3,}(?:[.,]\d+)*\b|\b\d+[.,]\d+\b|(?<![\p{L}])(?:(?:us|u\.s\.|canadian|australian)\s)?(?:dollars?|euros?|pounds? sterling|yen|francs?|kronor|kroner|złoty|rupees?|pesos?|reais|yuan)(?![\p{L}])/giu;
/** A count of something named: a number and the word after it, when that word is not one of the commonest ("4 approvals", not "2 more"). */
const COUNTED = /(?<![\p{L}\p{N}.,])\d+(?:[.,]\d+)?\s?\p{L}{3,}(?![\p{L}\p{N}])/gu;
/** A capitalised word or acronym past a sentence's first word (a name, a product, a place), or any run of a script without capitals. */
const NAME = /(?<=[\s,;:(\u2014\u2013/"\u201c\u00ab\u201e-])(?!(?:I['\u2019](?:m|ll|ve|d)|OK|I)(?![\p{L}\p{N}]))\p{Lu}[\p{L}\p{N}'\u2019-]*(?:\s+\p{Lu}[\p{L}\p{N}'\u2019-]*)*|[\p{Script=Han}\p{Script=Katakana}\p{Script=Hangul}]{2,}/gu;
/**
 * Letters and digits with the marks on them (a Devanagari or Thai word's vowels), and the joiners that keep an
 * identifier or a number whole ("v2.4", "cache-east-2", "4,200").
 */
const WORD_PART = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/u.source;
const WORD = new RegExp(`${WORD_PART}(?:['\u2019.,_-]${WORD_PART})*`, "gu");
/** A folded text's words (its apostrophes made one), and the entity placeholders `formOf` put in it. */
const FORM_WORD = new RegExp(`\ue000\\w+|${WORD_PART}(?:['.,_-]${WORD_PART})*`, "gu");
/** Runs of scripts written without spaces are read two characters at a time, as search engines index them. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/**
 * Lowercase, accents folded, apostrophes made one, compatibility forms made plain (full-width letters, ligatures).
 * Only the marks of Latin, Greek and Cyrillic letters are accents ("Café" is "cafe"), and Arabic's and Hebrew's vowel
 * points are optional; elsewhere a mark is part of the letter and stays: kana's voicing (ガス, gas, is not カス, dregs),
 * Devanagari's and Thai's vowels. Hangul and kana are composed again.
 */
export function fold(text: string): string {
  // One pass, each run of marks replaced whole after its letter: linear however long the run (a lookbehind over it is not).
  return text.normalize("NFKD").replace(/([\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Arabic}\p{Script=Hebrew}])\p{M}+/gu, "$1").normalize("NFC").toLowerCase().replace(/\u2019/g, "'");
}

/** Whether a match of a shape's pattern, at `at` in `text`, is one of its entities. */
type Accept = (value: string, at: number, text: string) => boolean;

/**
 * Each shape's patterns, in the order they claim a text's spans: a date is not read again as a number, nor a quote as
 * a name. A capitalised word is a name unless ordinary text uses it often; an acronym or a code ("USD", "EU") is one
 * whatever its lowercase form means, and so is a common word capitalised after a word or a comma ("the US and
 * Canada").
 */
const SCANNERS: readonly (readonly [RegExp, EntityShape, Accept?])[] = [
  [QUOTED_SPANS, "quote"],
  [DATE, "date"],
  [DAY_OR_MONTH, "date"],
  [PATHLIKE, "path", isIdentifier],
  [AMOUNT, "number"],
  [COUNTED, "number", (t) => !COMMON.has(fold(t.slice(t.search(/\p{L}/u))))],
  [NAME, "name", (t, at, text) => !COMMON.has(fold(t)) || /^\p{Lu}{2,}$/u.test(t) || /[\p{L}\p{N},] $/u.test(text.slice(Math.max(0, at - 2), at))],
];

/**
 * The entities a text holds, each by its shape, in order of appearance; a span claimed by one shape is not read again.
 * `only`: just these shapes (what a search asks for); the shapes scanned before them still claim their spans, those
 * after are not read.
 */
export function entitiesOf(text: string, only?: ReadonlySet<EntityShape>): Entity[] {
  const found: Entity[] = [];
  // Each character claimed at most once: checking a span costs its length, not the entities found so far.
  const claimed = new Uint8Array(text.length);
  const free = (at: number, end: number) => !claimed.subarray(at, end).includes(1);
  const scanners = only ? SCANNERS.slice(0, SCANNERS.findLastIndex(([, shape]) => only.has(shape)) + 1) : SCANNERS;
  for (const [re, shape, accept] of scanners) {
    for (const m of text.matchAll(re)) {
      let value = m[0].replace(/[.,;:!?)]+$/, "").trim();
      const at = m.index;
      // A name runs into a span claimed already ("the Kenwood NX-3000"): its words before that span are the name.
      if (shape === "name" && !free(at, at + value.length)) value = value.slice(0, claimed.indexOf(1, at) - at).trim();
      const end = at + value.length;
      if (value.length < 2 || (accept && !accept(value, at, text)) || !free(at, end)) continue;
      found.push({ text: value, shape, at });
      claimed.fill(1, at, end);
    }
  }
  return (only ? found.filter((e) => only.has(e.shape)) : found).sort((a, b) => a.at - b.at);
}

/** An entity of a text: its value, its shape, and where it starts. */
export interface Entity {
  text: string;
  shape: EntityShape;
  at: number;
}

/** Whether a path-like run names something: not a number, an abbreviation ("e.g."), a time ("10:30") or a hyphenated phrase. */
function isIdentifier(run: string): boolean {
  // A channel, a handle or a tag ("#inc-war-room", "@dana.w") names one thing, whatever its words.
  if (/^[#@]/.test(run)) return true;
  // A number joined to its unit ("30-minute", "2-hour", "3.2p", "2.5GB") is an amount, read as one.
  if (/^\p{N}+(?:[.,]\p{N}+)?(?:-\p{L}+|\p{L}{1,3})$/u.test(run)) return false;
  if (!/\p{L}/u.test(run) || /^\p{L}\.(?:\p{L}\.?)+$/u.test(run) || /^[\p{L}']+$/u.test(run)) return false;
  if (/[/\\._@:]/.test(run)) return !/^\p{L}+:$/u.test(run);
  const parts = run.split("-").filter(Boolean);
  // A digit, an acronym part ("INV-EU") or three parts mostly uncommon make an identifier of a hyphenated run.
  return /\p{N}/u.test(run) || parts.some((p) => /^\p{Lu}{2,}$/u.test(p)) || (parts.length >= 3 && parts.filter((p) => COMMON.has(fold(p))).length <= 1);
}

/** The words and entities of a text, each once: what its information is summed over. */
export function termsOf(text: string): Terms {
  const words = new Set<string>();
  const phrases = new Set<string>();
  let previous = "";
  for (const match of text.matchAll(WORD)) {
    // A possessive is its noun: "Marlowe's report" is about Marlowe.
    const word = fold(match[0]).replace(/'s$/, "");
    if (UNSPACED.test(word)) for (let k = 0; k + 1 < word.length || k === 0; k++) words.add(word.slice(k, k + 2));
    else words.add(word);
    // Phrases by their stems, so "invoice numbering" and "invoice numbers" name one subject.
    const stemmed = stem(word);
    if (word.length >= PHRASE_WORD && previous.length >= PHRASE_WORD) phrases.add(`${previous} ${stemmed}`);
    previous = word.length >= PHRASE_WORD ? stemmed : word;
  }
  const found = entitiesOf(text);
  const entities = new Set(found.map((e) => `\u00a7${e.shape}:${fold(e.text).replace(/\s+/g, " ")}`));
  return { words: [...words], entities: [...entities], phrases: [...phrases], ...formOf(text, found) };
}

/**
 * A text's canonical form: each entity replaced by its shape, each number (bare, an amount, or with a unit of a few
 * letters written onto it: "24", "£24.10", "3.2p") by `#`, its words folded, in order; and the numbers `#` stands
 * for, in order.
 */
function formOf(text: string, entities: readonly Entity[]): { form: string; numbers: string[] } {
  // Each entity stands in the text as a mark no user text holds (a private-use character), so a "§path" the user
  // typed is only the word "path".
  const parts: string[] = [];
  let from = 0;
  for (const e of entities) {
    parts.push(text.slice(from, e.at).replace(/\ue000/g, " "), ` \ue000${e.shape} `);
    from = e.at + e.text.length;
  }
  parts.push(text.slice(from).replace(/\ue000/g, " "));
  const amounts = entities.filter((e) => e.shape === "number").map((e) => fold(e.text).replace(/\s+/g, " "));
  const numbers: string[] = [];
  const words = [...fold(parts.join("")).matchAll(FORM_WORD)].map(([word]) => {
    // An amount is a number too: "£24.10 an hour" and "£25.35 an hour" give the same place a new value.
    if (word === "\ue000number") {
      numbers.push(amounts.shift()!);
      return "#";
    }
    if (word.startsWith("\ue000")) return `\u00a7${word.slice(1)}`;
    if (!NUMBER_WORD.test(word)) return word.replace(/\p{N}+/gu, "#");
    numbers.push(word);
    return "#";
  });
  return { form: words.join(" "), numbers };
}

/** A number, bare or with a unit of a few letters written onto it ("24", "3.2p", "25kg"). */
const NUMBER_WORD = /^\p{N}+(?:[.,]\p{N}+)?\p{L}{0,3}$/u;

/** Words of this length or more make up the two-word phrases a subject may be ("welcome email", "email subject"). */
const PHRASE_WORD = 4;

/** The shape of an entity term (`§date:june 9` is a date). */
export function entityShape(term: string): EntityShape {
  return term.slice(1, term.indexOf(":")) as EntityShape;
}

/** Whether a word is one of the commonest of ordinary language (or too short to name anything). */
export function isCommon(word: string): boolean {
  return COMMON.has(word) || (word.length < 3 && !/\p{N}/u.test(word) && !UNSPACED.test(word));
}

/**
 * Document frequencies over a conversation's units, and the information of any one of them. Built once per summary
 * from every unit it weighs, so a word's weight is what the whole conversation says of it.
 */
export class Information {
  private readonly df = new Map<string, number>();
  private count = 0;

  constructor(units: Iterable<Terms>) {
    for (const terms of units) this.add(terms);
  }

  add(terms: Terms): void {
    this.count++;
    for (const term of [...terms.words, ...terms.entities, ...terms.phrases]) this.df.set(term, (this.df.get(term) ?? 0) + 1);
  }

  /**
   * What a term tells a unit that holds it: its rarity here (the log of the units over those that hold it), shared
   * among the units that hold it — once one of them is kept, the others add nothing about it. An unseen term is as
   * rare as can be.
   */
  idf(term: string): number {
    const df = this.df.get(term) ?? 0;
    return Math.log(1 + (this.count + 1) / (df + 0.5)) / Math.max(1, df);
  }

  /** A word's weight: its rarity here, a fifth of it for the commonest words of any text. */
  wordWeight(word: string): number {
    return this.idf(word) * (isCommon(word) ? COMMON_WEIGHT : UNSPACED.test(word) ? PAIR_WEIGHT : 1);
  }

  /** The information a unit carries: its words' weights and its entities', each distinct term once. */
  of(terms: Terms): number {
    let sum = 0;
    for (const word of terms.words) sum += this.wordWeight(word);
    for (const entity of terms.entities) {
      // A longer value is one of more possible values ("2026-04-02" against "Friday", a URL against a name): its
      // information grows with its length, as what it costs in tokens does, so a long value is not dropped for its length.
      const value = entity.slice(entity.indexOf(":") + 1);
      sum += ENTITY_WEIGHT * this.idf(entity) * Math.max(1, value.length / ENTITY_CHARS);
      // A quotation's common words are its exact wording, not ordinary language: they count in full.
      if (entityShape(entity) === "quote") for (const [word] of entity.slice(entity.indexOf(":") + 1).matchAll(WORD)) if (isCommon(word)) sum += (1 - COMMON_WEIGHT) * this.idf(word);
    }
    return sum;
  }

  /** How many units hold this term. */
  frequency(term: string): number {
    return this.df.get(term) ?? 0;
  }
}

/** Two canonical forms are alike when their shared pairs weigh at least this share of both (Dice, each pair by its rarity). */
const ALIKE_PAIRS = 0.5;
/** A form with fewer pairs that hold a word than this is compared whole: it has too few words to be a template of. */
const ALIKE_MIN_PAIRS = 2;
/**
 * Index entries a form reads at most while it looks for other forms, through its rarest pairs first; each form met is
 * then compared on all its pairs. A form whose pairs thousands of others share counts the alike among those it met,
 * and the digest stays linear.
 */
const ALIKE_VISITS = 1_024;

/**
 * A form's consecutive word pairs, or null when fewer than ALIKE_MIN_PAIRS of them hold a word (not a value's shape or
 * `#`, nor a script written without spaces, whose names read as shapes and whose particles repeat in every sentence).
 */
function formPairs(form: string): Set<string> | null {
  const words = form.split(" ");
  const word = (w: string) => w !== "" && !w.startsWith("\u00a7") && !w.includes("#") && !UNSPACED.test(w);
  const pairs = new Set<string>();
  let worded = 0;
  for (let k = 0; k + 1 < words.length; k++) {
    const pair = `${words[k]} ${words[k + 1]}`;
    if (!pairs.has(pair) && (word(words[k]!) || word(words[k + 1]!))) worded++;
    pairs.add(pair);
  }
  return worded >= ALIKE_MIN_PAIRS ? pairs : null;
}

/**
 * Which of a conversation's units have canonical forms alike: their consecutive word pairs, each weighed by its rarity
 * among the conversation's forms (`weight`), shared for half or more of both forms' weight. A routine is a form the
 * user fills again and again, and a template with a word slot ("Update the cost tracker: line 125, security, committed
 * £39,595" … "line 23, traffic marshals, …") is one as much as a form repeated exactly; a fact is stated in a form of
 * its own. Pairs keep a form's order without asking every word to match, and their rarity tells a template from
 * grammar: "The venue is at Hartley Hall." and "The dinner is at Rosa's." share "is at" and "at" a name, which many
 * forms hold, and not their subjects, so they are not alike. A routine that makes up most of the conversation has pairs
 * as common as grammar, and reads as a routine no more. Each distinct form is compared once, through an index of its
 * pairs (ALIKE_VISITS).
 */
export class AlikeForms {
  /** For each unit, how many units (itself included) have a form alike to its own; units left uncounted count for none. */
  readonly counts: number[];
  /** For each unit, how many units have its very form, repeats included. */
  readonly copies: number[];
  private readonly forms: string[];
  private readonly of: number[];
  private readonly pairs: (Set<string> | null)[];
  private readonly holders = new Map<string, number[]>();
  private readonly size: number[];

  constructor(units: readonly Terms[], counted: (k: number) => boolean = () => true) {
    const index = new Map<string, number>();
    const copies: number[] = [];
    const all: number[] = [];
    this.of = units.map(({ form }, k) => {
      let f = index.get(form);
      if (f === undefined) index.set(form, (f = index.size));
      copies[f] = (copies[f] ?? 0) + (counted(k) ? 1 : 0);
      all[f] = (all[f] ?? 0) + 1;
      return f;
    });
    this.forms = [...index.keys()];
    this.pairs = this.forms.map(formPairs);
    this.pairs.forEach((set, f) =>
      set?.forEach((pair) => {
        const list = this.holders.get(pair);
        if (list) list.push(f);
        else this.holders.set(pair, [f]);
      }),
    );
    this.size = this.pairs.map((set) => (set ? [...set].reduce((sum, pair) => sum + this.weight(pair), 0) : 0));
    const alike = this.pairs.map((set, f) => {
      let n = copies[f]!;
      if (!set) return n;
      // The forms met through its rarest pairs first, each then compared on all its pairs.
      const met = new Set<number>();
      let visits = 0;
      const rarestFirst = [...set].sort((a, b) => this.holders.get(a)!.length - this.holders.get(b)!.length);
      meet: for (const pair of rarestFirst) {
        for (const g of this.holders.get(pair)!) {
          if (++visits > ALIKE_VISITS) break meet;
          if (g !== f) met.add(g);
        }
      }
      for (const g of met) if (this.formsAlike(f, g)) n += copies[g]!;
      return n;
    });
    // A counted unit is among its form's copies; one left uncounted still counts itself.
    this.counts = this.of.map((f, k) => alike[f]! + (counted(k) ? 0 : 1));
    this.copies = this.of.map((f) => all[f]!);
  }

  /** Whether two distinct forms, both compared by their pairs, share half or more of their weight. */
  private formsAlike(f: number, g: number): boolean {
    const [x, y] = [this.pairs[f], this.pairs[g]];
    if (!x || !y) return false;
    const [fewer, more] = x.size <= y.size ? [x, y] : [y, x];
    let common = 0;
    for (const pair of fewer) if (more.has(pair)) common += this.weight(pair);
    return (2 * common) / (this.size[f]! + this.size[g]!) >= ALIKE_PAIRS;
  }

  /** A pair weighs its rarity among the forms: grammar many forms hold ("is at", "at" a name) tells little. */
  private weight(pair: string): number {
    return Math.log(1 + this.forms.length / this.holders.get(pair)!.length);
  }
}
