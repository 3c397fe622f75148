/**
 * The order in which the digest gives up the user's words when they do not fit: least information per token
 * first (`information.ts`), oldest first among equals. Three rules of structure sit on top, none read from wording:
 *
 * - A sentence the user repeated word for word goes first: the earlier one says it.
 * - An update outlasts what it updates. A later sentence that shares a specific term with an earlier one (a word or
 *   entity said in at most a few sentences: "Stonechat", "the staging port") and replaces one of its entities with
 *   another of the same shape ("Vue" → "Postgres", "8080" → "8443", "June 9" → "June 12", "US dollars" → "euros") is
 *   a correction: it carries its own information and undoes the earlier sentence's, so it counts twice, and the
 *   earlier sentence always goes before it. A value a correction replaced therefore never outlasts it. Two runs of a
 *   routine (one form three or more sentences share, two or more values changed: the same report each week) are not
 *   a value and its update. A subject
 *   many sentences share still has an update where a later sentence puts a new number in the same place of the same
 *   words and no other value stands there ("HCA rate is £24.10 an hour" → "HCA rate has gone up to £25.35 an hour").
 * - A sentence phrased as a correction that names no subject of its own ("No wait, make that Thursday.") keeps the
 *   sentence before it for as long as it stays; its phrasing breaks ties, nothing more.
 */
import { countTokens } from "../core/tokens";
import { AlikeForms, entityShape, Information, isCommon, termsOf, type Terms } from "./information";
import { kindOf, soundsLikeCorrection, type UnitKind } from "./user-words";

/** A unit of the user's words: sentence `i` of the `of` in message `seq`. */
export interface Unit {
  seq: number;
  i: number;
  of: number;
  text: string;
  /** What it holds (for the loss notes); `correction` once found to update an earlier unit, for good. */
  kind: UnitKind;
  /** The user said exactly this before: it goes first. */
  repeat?: true;
}

/** A term said in at most this many of the user's sentences names a subject; one said more often is a topic (or a template's word). */
const SPECIFIC_DF = 2;
/**
 * Terms said in at most this many sentences may name a subject together: "the SMS reminder provider charges 3.2p" and
 * "the SMS reminder price is 2.9p" share "sms" and "reminder", each said more often, but no other sentence says both.
 */
const JOINT_DF = 8;
/** Sentences of one canonical form (`information.ts`'s `formOf`) from which the form may be a routine. */
const ROUTINE_FORMS = 3;
/** Pasted data (logs, JSON, tables) is worth this share of prose with the same terms: machines wrote most of it. */
const PASTED_WEIGHT = 0.3;
/** A correction counts its information again: it also undoes what it corrects. */
const CORRECTION_WEIGHT = 2;
const TIE = 1e-9;
/**
 * A question the conversation went on from is worth half: it asked, and the answer (in stored history, where
 * search_history finds it) is what it led to. A question mark is read in any script.
 */
const QUESTION_WEIGHT = 0.5;
const isQuestion = (text: string) => /[?\uff1f\u037e]\s*$|^\u00bf/u.test(text);

/**
 * The kind a unit shows now: a correction stays one, and so does pasted data (where it stood said so: a fence, a
 * table, a log, a quotation, none of which its text alone shows); anything else is read again from its text (a state
 * written by an earlier digest may name kinds this one no longer uses).
 */
export function unitKind(unit: Pick<Unit, "text" | "kind">): UnitKind {
  return unit.kind === "correction" || unit.kind === "pasted" ? unit.kind : kindOf(unit.text);
}

/**
 * Steps to give the units up in, least worth first; each step is units that go together (a correction with the
 * sentence it leans on). Marks the units found to be corrections (`kind: "correction"`) in place.
 */
export function dropSteps(units: Unit[]): Unit[][] {
  const terms = units.map((u) => termsOf(u.text));
  // Every sentence counts, repeats too: a word the user keeps saying is a word that tells little.
  const information = new Information(terms);
  const subjectsOf = terms.map((t) => subjectTerms(t, information, JOINT_DF));
  const holding = new Map<string, Set<number>>();
  subjectsOf.forEach((list, u) => list.forEach((term) => holding.set(term, (holding.get(term) ?? new Set()).add(u))));
  // Every unit that updates each unit, in order.
  const updaters = new Map<number, number[]>();
  /**
   * Whether terms units `e` and `k` share name a subject only they hold: one no other unit holds, or two or more no
   * other holds together. Or, when others hold them too, whether `k` gives a new number in the same place of the
   * same words as `e` and no other value still standing there ("Agency HCA rate is £24.10 an hour" → "the agency HCA
   * rate has gone up to £25.35 an hour", though a third sentence names the HCA rota).
   */
  const nameASubject = (shared: readonly string[], e: number, k: number) => {
    if (shared.some((term) => holding.get(term)!.size <= SPECIFIC_DF)) return true;
    let together = holding.get(shared[0]!)!;
    for (const term of shared.slice(1)) together = new Set([...together].filter((u) => holding.get(term)!.has(u)));
    if (shared.length >= 2 && together.size <= SPECIFIC_DF) return true;
    if (!replacesANumber(terms[e]!, terms[k]!)) return false;
    return [...together].every((u) => u === e || u >= k || updaters.has(u) || !replacesANumber(terms[u]!, terms[k]!));
  };

  const alike = new AlikeForms(terms, (k) => !units[k]!.repeat);
  const earlier = new Map<string, number[]>();
  units.forEach((unit, k) => {
    if (unit.repeat || unit.kind === "filler" || unit.kind === "pasted") return;
    const shared = new Map<number, string[]>();
    for (const term of subjectsOf[k]!) for (const e of earlier.get(term) ?? []) shared.set(e, [...(shared.get(e) ?? []), term]);
    for (const [e, common] of shared) {
      if (!changesAValue(terms[e]!, terms[k]!) || !nameASubject(common, e, k) || routine(terms[e]!, terms[k]!, alike.copies[k]!)) continue;
      unit.kind = "correction";
      updaters.set(e, [...(updaters.get(e) ?? []), k]);
    }
    for (const term of subjectsOf[k]!) earlier.set(term, [...(earlier.get(term) ?? []), k]);
  });

  const worth = units.map((unit, k) => {
    if (unit.repeat) return -1;
    const weight = (unit.kind === "correction" ? CORRECTION_WEIGHT : 1) * (unit.kind === "pasted" ? PASTED_WEIGHT : 1) * (isQuestion(unit.text) ? QUESTION_WEIGHT : 1);
    return (weight * information.of(terms[k]!)) / alike.counts[k]! / cost(unit) + (soundsLikeCorrection(unit.text) ? TIE : 0);
  });

  // A correction that gives a value but names no subject ("It goes out Sunday, not Thursday.") and the sentence before it, which does
  // (in its message, or the last of the one before), go together, at the worth of the more valuable.
  const subjectOf = new Map<number, number>();
  units.forEach((unit, k) => {
    if (k === 0 || unit.repeat || terms[k]!.entities.length === 0 || !soundsLikeCorrection(unit.text) || namesASubject(terms[k]!)) return;
    const before = units[k - 1]!;
    if (before.repeat || before.kind === "filler" || subjectOf.has(k - 1)) return;
    subjectOf.set(k, k - 1);
    worth[k] = worth[k - 1] = Math.max(worth[k]!, worth[k - 1]!);
  });
  // What an update replaced goes before each unit that updates it, not only the latest (a later sentence read as an
  // update of the same subject must not carry the old value past the true correction): walking back, chains order
  // themselves.
  for (let k = units.length - 1; k >= 0; k--) {
    for (const later of updaters.get(k) ?? []) worth[k] = Math.min(worth[k]!, worth[later]! - TIE);
  }

  const subjects = new Set(subjectOf.values());
  const order = units.map((_, k) => k).filter((k) => !subjects.has(k));
  order.sort((a, b) => worth[a]! - worth[b]! || units[a]!.seq - units[b]!.seq || units[a]!.i - units[b]!.i);
  return order.map((k) => {
    const subject = subjectOf.get(k);
    return subject === undefined ? [units[k]!] : [units[k]!, units[subject]!];
  });
}

/** What keeping a unit costs: its words and the space before them, and its line's "- [#seq] " when it is its message's only unit. */
function cost(unit: Unit): number {
  return countTokens(unit.text) + 1 + (unit.of === 1 ? LINE_TOKENS : 0);
}

/** A line's "- [#1234] " and its line break. */
const LINE_TOKENS = 7;

/**
 * Whether two sentences are two runs of a routine rather than a value and its update: one canonical form that three or
 * more of the user's sentences share, and two or more values that differ between them ("Web traffic down 23.5 % …;
 * Bernie to look at …" each week with other figures and names). An update changes one value of the same words ("the
 * agency HCA rate is £24.10 an hour" → "£25.35 an hour" → "£26 an hour"), however often.
 */
function routine(earlier: Terms, later: Terms, copies: number): boolean {
  if (earlier.form !== later.form || copies < ROUTINE_FORMS) return false;
  const numbers = later.numbers.filter((n, i) => n !== earlier.numbers[i]).length;
  const before = new Set(earlier.entities.filter((e) => entityShape(e) !== "number"));
  const entities = later.entities.filter((e) => entityShape(e) !== "number" && !before.has(e)).length;
  return numbers + entities >= 2;
}

/** Whether a unit has a word of its own besides its values: "the kickoff is at 9:30" does, "make that Thursday" does not. */
function namesASubject(terms: Terms): boolean {
  const inValues = new Set(terms.entities.flatMap((e) => e.slice(e.indexOf(":") + 1).split(/[^\p{L}\p{N}']+/u)));
  return terms.words.some((w) => w.length >= 3 && !isCommon(w) && !inValues.has(w));
}

/** A unit's terms that may name a subject: entities, uncommon words and two-word phrases said in at most `df` of the user's sentences. */
function subjectTerms(terms: Terms, information: Information, df: number): string[] {
  const words = terms.words.filter((w) => w.length >= 3 && !isCommon(w) && !/^\p{N}+$/u.test(w));
  return [...words, ...terms.entities, ...terms.phrases].filter((t) => information.frequency(t) <= df);
}

/**
 * Whether `later` gives a new value of a kind `earlier` had: an entity of the same shape that `earlier` did not hold
 * ("Monday, not Saturday" restates the old value beside the new one), or a new bare number in the same place of their
 * canonical forms ("API level 24" → "API level 26": too small to be an amount, but the same slot of the same subject).
 */
function changesAValue(earlier: Terms, later: Terms): boolean {
  const before = new Set(earlier.entities);
  const shapes = new Set(earlier.entities.map(entityShape));
  if (later.entities.some((e) => !before.has(e) && shapes.has(entityShape(e)))) return true;
  return replacesANumber(earlier, later);
}

/** Whether `later` has a number where `earlier`'s canonical form has another: the same word before it, or after it. */
function replacesANumber(earlier: Terms, later: Terms): boolean {
  const slots = numberSlots(earlier);
  return numberSlots(later).some(([slot, value]) => slots.some(([s, v]) => s === slot && v !== value));
}

/** Each number of a canonical form with the word before it and, apart, the word after it: "level 24" gives ["level #", "24"]. */
function numberSlots(terms: Terms): [slot: string, value: string][] {
  const words = terms.form.split(" ");
  const slots: [string, string][] = [];
  let n = 0;
  words.forEach((w, k) => {
    if (w !== "#") return;
    const value = terms.numbers[n++]!;
    if (k > 0) slots.push([`${words[k - 1]} #`, value]);
    if (k + 1 < words.length) slots.push([`# ${words[k + 1]}`, value]);
  });
  return slots;
}
