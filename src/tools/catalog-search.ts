/**
 * Search over a large tool catalog: what the model's `search_tools` tool answers with. Pure and synchronous.
 *
 * An exact name comes first (qualified "app:tool", bare "tool", or the model-facing "app__tool"), and
 * `select:a,b` asks for names only, as Anthropic's tool search does: a model that knows the name must never be
 * told the tool doesn't exist. Everything else is ranked by BM25F over the tool's name (app and tool words, weighed
 * most), its description, and its parameters (names, descriptions, allowed values), with ties broken by name so the
 * same query always gives the same list. A query word the catalog never uses is read as the catalog's words it may
 * stand for (a typo, an abbreviation, an initialism, a numeronym, a cognate), built from the catalog's own vocabulary,
 * at the weight of how close it is. Building the index and searching are linear in the catalog's words.
 */
import { isEverydayWord } from "../core/everyday-words";
import { stem } from "../core/stem";

export interface CatalogTool {
  /** Qualified "app:tool", e.g. "calendar:create_event". */
  name: string;
  description: string;
  /** The tool's input as JSON Schema: its parameters' names, descriptions and allowed values are searched too. */
  inputSchema: Readonly<Record<string, unknown>>;
}

export interface CatalogHit {
  name: string;
  /** BM25 relevance of the tool to the query's words (exact hits carry theirs too, and come first regardless). */
  score: number;
  exact: boolean;
  /**
   * How much of the query the tool's words account for, 0 to 1: each query word's weight (its rarity in the catalog)
   * counts where the tool holds the word or a reading of it. How sure the lexical ranker is that it read the query.
   */
  coverage: number;
}

export const SEARCH_LIMITS = { defaultResults: 5, maxResults: 20, maxQueryChars: 512 } as const;

const K1 = 1.2;
const B = 0.75;
/**
 * Name words say what a tool does; the description adds context; an allowed value ("private", "csv") often decides
 * between look-alikes; parameter names are weak but catch "JQL", "cc"; parameter descriptions are long and weakest.
 */
const FIELD_WEIGHTS = { name: 3, description: 1, values: 1, parameters: 0.6, parameterText: 0.4 } as const;
type Field = keyof typeof FIELD_WEIGHTS;
const FIELDS = Object.keys(FIELD_WEIGHTS) as Field[];

const STOP_WORDS = new Set(
  ("a am an and any are as at be been but by can could d did do does don for from had has have how i if in into is it " +
    "its just ll m many me much my of on or our please re s should so some t than that the their them then there these " +
    "this those to ve was we were what when where which who whose why will with would you your").split(" "),
);

/** Compound words that split into stop words ("to-do" is "to" and "do") or apart from their other spelling. */
const COMPOUNDS: readonly (readonly [RegExp, string])[] = [
  [/\bto-?dos?\b/gi, "todo"],
  [/\be-mail/gi, "email"],
];

/**
 * Lowercase words of a name, sentence or identifier: camelCase, snake_case, kebab-case, dots and colons split; stop
 * words dropped. A word keeps its marks (a Devanagari or Thai word's vowel signs are letters of it).
 */
function words(text: string): string[] {
  // One canonical form for what looks the same: "café" typed as e plus an accent is the word "café".
  const joined = COMPOUNDS.reduce((t, [pattern, word]) => t.replace(pattern, word), text.normalize("NFC"));
  const spaced = joined.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2").replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, "$1 $2");
  return spaced
    .toLowerCase()
    .split(/[^\p{L}\p{M}\p{N}]+/u)
    .filter((word) => word !== "" && !STOP_WORDS.has(word));
}

/** Lowercase stems of a name, sentence or identifier (`words`, stemmed). */
export function tokenize(text: string): string[] {
  return words(text).map(stem);
}

interface Posting {
  doc: number;
  /** Term frequency per field, in FIELDS order. */
  tf: number[];
}

/** A catalog word a query word may stand for, and how close it is (1: the word itself). */
interface Reading {
  term: string;
  weight: number;
}

/** At most this many catalog words stand for one unknown query word: the closest, then the commonest. */
const READINGS_PER_WORD = 3;

export class ToolIndex {
  private readonly tools: readonly CatalogTool[];
  private readonly postings = new Map<string, Posting[]>();
  private readonly fieldLengths: number[][];
  private readonly averageLengths: number[];
  /** Lowercased qualified, bare and app__tool forms → tool positions, for the exact-name path. */
  private readonly byName = new Map<string, number[]>();
  /** Initials of consecutive name words ("pull request" → "pr") → the words' terms. */
  private readonly initialisms = new Map<string, Set<string>>();
  /**
   * Each term's words as the catalog wrote them ("kubernet" → "kubernetes"): a numeronym counts the written word's
   * letters. Made at the first numeronym a query holds, as few do.
   */
  private written: Map<string, Set<string>> | null = null;

  constructor(tools: readonly CatalogTool[]) {
    this.tools = tools;
    this.fieldLengths = tools.map((tool, doc) => {
      const fields = toolFields(tool);
      const counts = new Map<string, number[]>();
      FIELDS.forEach((field, f) => {
        for (const term of fields[field]) {
          const tf = counts.get(term) ?? FIELDS.map(() => 0);
          tf[f]!++;
          counts.set(term, tf);
        }
      });
      for (const [term, tf] of counts) {
        const list = this.postings.get(term);
        if (list === undefined) this.postings.set(term, [{ doc, tf }]);
        else list.push({ doc, tf });
      }
      for (const form of nameForms(tool.name)) {
        const list = this.byName.get(form);
        if (list === undefined) this.byName.set(form, [doc]);
        else if (!list.includes(doc)) list.push(doc);
      }
      const named = tokenize(tool.name.slice(tool.name.indexOf(":") + 1));
      for (let i = 0; i + 1 < named.length; i++) {
        for (const n of [2, 3]) {
          const run = named.slice(i, i + n);
          if (run.length < n) continue;
          const initials = run.map((w) => w[0]).join("");
          this.initialisms.set(initials, new Set([...(this.initialisms.get(initials) ?? []), ...run]));
        }
      }
      return FIELDS.map((field) => fields[field].length);
    });
    this.averageLengths = FIELDS.map((_, f) => Math.max(1, this.fieldLengths.reduce((sum, lengths) => sum + lengths[f]!, 0) / Math.max(1, tools.length)));
  }

  /**
   * Best first; ties broken by name so results are deterministic. An exact name (qualified "app:tool", bare "tool",
   * or the model-facing form "app__tool") is returned first with exact: true; `select:a,b` returns only the named
   * tools that exist. A query longer than 512 characters is cut; an empty one finds nothing.
   */
  search(query: string, limit: number = SEARCH_LIMITS.defaultResults): CatalogHit[] {
    const max = Number.isFinite(limit) ? Math.min(SEARCH_LIMITS.maxResults, Math.max(1, Math.floor(limit))) : SEARCH_LIMITS.defaultResults;
    const text = query.slice(0, SEARCH_LIMITS.maxQueryChars).trim();
    if (text === "") return [];
    const words = queryWords(this.wholeNames(text)).map((word) => this.readings(word));
    const scores = this.score(words);
    const byRank = (a: number, b: number) => (scores.get(b) ?? 0) - (scores.get(a) ?? 0) || compareNames(this.tools[a]!.name, this.tools[b]!.name);
    const hit = (doc: number, exact: boolean): CatalogHit => ({ name: this.tools[doc]!.name, score: round(scores.get(doc) ?? 0), exact, coverage: exact ? 1 : round(this.coverage(words, doc)) });

    const select = /^select:/i.exec(text);
    if (select !== null) {
      const named = this.exactMatches(text.slice(select[0].length).split(","));
      return named.sort(byRank).slice(0, max).map((doc) => hit(doc, true));
    }
    const exact = this.exactMatches(exactCandidates(text)).sort(byRank);
    const ranked = [...scores.keys()].filter((doc) => !exact.includes(doc) && scores.get(doc)! > 0).sort(byRank);
    return [...exact, ...ranked].slice(0, max).map((doc) => hit(doc, exact.includes(doc)));
  }

  /**
   * A word in camel case that the catalog holds whole ("DrChrono", "DocuSign", "PagerDuty": an app's name) is read
   * whole, lowercased, not as its parts: "Dr" alone would read as the initials of "dns record".
   */
  private wholeNames(text: string): string {
    return text.replace(/\p{L}[\p{L}\p{N}]*/gu, (word) => (/\p{Ll}\p{Lu}/u.test(word) && this.postings.has(stem(word.toLowerCase())) ? word.toLowerCase() : word));
  }

  private writtenWords(): Map<string, Set<string>> {
    if (this.written === null) {
      this.written = new Map();
      for (const word of this.tools.flatMap((tool) => Object.values(toolFields(tool, words)).flat())) this.written.set(stem(word), (this.written.get(stem(word)) ?? new Set()).add(word));
    }
    return this.written;
  }

  private exactMatches(names: readonly string[]): number[] {
    const docs: number[] = [];
    for (const name of names) for (const doc of this.byName.get(name.trim().toLowerCase()) ?? []) if (!docs.includes(doc)) docs.push(doc);
    return docs;
  }

  /** BM25F over the query words' readings: each field's term frequency is length-normalised and weighted, then saturated once per term. */
  private score(words: readonly Reading[][]): Map<number, number> {
    const weights = new Map<string, number>();
    for (const readings of words) {
      for (const { term, weight } of readings) weights.set(term, Math.max(weights.get(term) ?? 0, weight));
    }
    const scores = new Map<number, number>();
    for (const [term, weight] of weights) {
      const postings = this.postings.get(term);
      if (postings === undefined) continue;
      const idf = this.idf(postings.length);
      for (const { doc, tf } of postings) {
        let weighted = 0;
        FIELDS.forEach((field, f) => {
          if (tf[f] === 0) return;
          const norm = 1 - B + (B * this.fieldLengths[doc]![f]!) / this.averageLengths[f]!;
          weighted += (FIELD_WEIGHTS[field] * tf[f]!) / norm;
        });
        scores.set(doc, (scores.get(doc) ?? 0) + (weight * idf * weighted * (K1 + 1)) / (weighted + K1));
      }
    }
    return scores;
  }

  private idf(holding: number): number {
    const n = this.tools.length;
    return Math.log(1 + (n - holding + 0.5) / (holding + 0.5));
  }

  /**
   * The share of the query's weight the tool holds: each query word weighs its best reading's rarity (a word the
   * catalog never uses, with no reading, the rarest there can be), and counts where the tool holds that reading.
   */
  private coverage(words: readonly Reading[][], doc: number): number {
    let total = 0;
    let held = 0;
    for (const readings of words) {
      const worth = (r: Reading) => r.weight * this.idf(this.postings.get(r.term)?.length ?? 0);
      total += readings.length ? Math.max(...readings.map(worth)) : this.idf(0);
      const here = readings.filter((r) => this.postings.get(r.term)?.some((p) => p.doc === doc));
      if (here.length) held += Math.max(...here.map(worth));
    }
    return total === 0 ? 0 : Math.min(1, held / total);
  }

  /**
   * The catalog words a query word stands for. A word the catalog uses is itself. Otherwise, by how sure the reading
   * is: a numeronym ("k8s": first letter, 8 letters, last letter), an initialism of a tool's name words ("pr"), a
   * typo (one edit, two in a long word, a swap counting one), an abbreviation (a prefix, or the word's letters in
   * order from the same first letter: "msg", "cmts"), a cognate (a shared start and most letter triples: "calendario").
   */
  private readings(word: QueryWord): Reading[] {
    if (this.postings.has(word.term)) return [{ term: word.term, weight: 1 }];
    if (word.name) return [];
    const found = new Map<string, number>();
    const add = (term: string, weight: number) => found.set(term, Math.max(found.get(term) ?? 0, weight));
    const numeronym = /^(\p{L})(\d+)(\p{L})$/u.exec(word.raw);
    for (const part of this.initialisms.get(word.raw) ?? []) add(part, 0.8);
    for (const term of this.postings.keys()) {
      if (numeronym) {
        const [, first, letters, last] = numeronym;
        if ([...(this.writtenWords().get(term) ?? [])].some((w) => w.length === Number(letters) + 2 && w.startsWith(first!) && w.endsWith(last!))) add(term, 0.9);
        continue;
      }
      const closeness = likeness(word.term, term, word.common);
      if (closeness > 0) add(term, closeness);
    }
    return [...found]
      .map(([term, weight]) => ({ term, weight }))
      .sort((a, b) => b.weight - a.weight || this.postings.get(b.term)!.length - this.postings.get(a.term)!.length || compareNames(a.term, b.term))
      .slice(0, READINGS_PER_WORD);
  }
}

/** A tool's terms by field (or its words, with `read` = `words`): name, description, its parameters' allowed values, names and descriptions. */
function toolFields(tool: CatalogTool, read: (text: string) => string[] = tokenize): Record<Field, string[]> {
  const parameters = schemaParameters(tool.inputSchema);
  return {
    name: read(tool.name),
    description: read(tool.description),
    values: parameters.flatMap((p) => p.values.flatMap(read)),
    parameters: parameters.filter((p) => p.path.length === 1).flatMap((p) => read(p.path[0]!)),
    parameterText: parameters.flatMap((p) => read(p.text)),
  };
}

/** One parameter of a tool's input: where it sits (property names from the top), its description and title, its allowed values. */
export interface SchemaParameter {
  path: readonly string[];
  text: string;
  values: readonly string[];
}

/** How deep into nested objects, array items and `anyOf`/`oneOf` branches a tool's parameters are read. */
const MAX_SCHEMA_DEPTH = 3;

/**
 * Each parameter of an input schema, nested ones too (object properties, array items, `anyOf`/`oneOf` branches, which
 * share their parameter's path), three levels deep: what both rankers read of a tool's input.
 */
export function schemaParameters(schema: unknown): SchemaParameter[] {
  const out: SchemaParameter[] = [];
  const walk = (node: unknown, path: readonly string[], depth: number) => {
    if (!isRecord(node) || !isRecord(node.properties) || depth >= MAX_SCHEMA_DEPTH) return;
    for (const [name, property] of Object.entries(node.properties)) {
      if (!isRecord(property)) continue;
      const variants = [property, property.items, ...(Array.isArray(property.anyOf) ? property.anyOf : []), ...(Array.isArray(property.oneOf) ? property.oneOf : [])].filter(isRecord);
      const texts = variants.flatMap((v) => [v.description, v.title]).filter((t): t is string => typeof t === "string" && t.trim() !== "");
      const values = variants.flatMap((v) => [...(Array.isArray(v.enum) ? v.enum : []), ...("const" in v ? [v.const] : [])]).filter((v) => typeof v === "string" || typeof v === "number");
      const at = [...path, name];
      out.push({ path: at, text: [...new Set(texts.map((t) => t.trim()))].join(" "), values: [...new Set(values.map(String))] });
      for (const variant of variants) walk(variant, at, depth + 1);
    }
  };
  walk(schema, [], 0);
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

interface QueryWord {
  /** As typed, lowercased ("k8s", "pr"). */
  raw: string;
  /** Its stem, as the index holds words. */
  term: string;
  /** A word of ordinary language: not read as a typo or an abbreviation, only as a cognate. */
  common: boolean;
  /** Capitalised after the query's first word ("Ana", "Radiohead"): a name, read as nothing else. */
  name: boolean;
}

function queryWords(text: string): QueryWord[] {
  const names = new Set([...text.matchAll(/(?<=\S\s+)\p{Lu}\p{Ll}+/gu)].map((m) => m[0].toLowerCase()));
  const seen = new Set<string>();
  const out: QueryWord[] = [];
  for (const raw of words(text)) {
    if (seen.has(raw)) continue;
    seen.add(raw);
    out.push({ raw, term: stem(raw), common: isEverydayWord(raw), name: names.has(raw) });
  }
  return out;
}

/**
 * How likely `word` (unknown to the catalog) stands for the catalog's `term`, 0 to 1 (never 1: the word itself is
 * surer). Short words are read only as prefixes or abbreviations of longer ones: a one-letter change to a
 * three-letter word is another word, not a typo.
 */
function likeness(word: string, term: string, common: boolean): number {
  if (word.length < 2 || term.length < 3) return 0;
  if (!common && word.length >= 4 && Math.abs(word.length - term.length) <= 2) {
    const max = word.length >= 8 ? 2 : 1;
    const distance = editDistance(word, term, max);
    if (distance <= max) return distance === 1 ? 0.85 : 0.7;
  }
  if (!common && term.length > word.length && word[0] === term[0] && word.length >= 3) {
    if (term.startsWith(word)) return word.length === 3 ? 0.5 : 0.75;
    if (isSubsequence(word, term) && /[^aeiou]$/.test(word)) return 0.6;
  }
  // Another form of the same word: the catalog's word and a suffix ("deletion", "cancellation", "uploader").
  if (term.length >= 4 && word.length > term.length && word.length - term.length <= 5 && word.startsWith(term)) return 0.7;
  if (word.length >= 5 && term.length >= 5 && commonPrefix(word, term) >= 4) {
    const dice = trigramDice(word, term);
    if (dice >= 0.5) return 0.5 * dice;
  }
  return 0;
}

/** Damerau-Levenshtein (adjacent swaps count one) up to `max`; more is max + 1. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      row.push(value);
      best = Math.min(best, value);
    }
    if (best > max) return max + 1;
    before = previous;
    previous = row;
  }
  return previous[b.length]!;
}

function isSubsequence(short: string, long: string): boolean {
  let i = 0;
  for (const ch of long) if (ch === short[i]) i++;
  return i === short.length;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function trigramDice(a: string, b: string): number {
  const grams = (w: string) => new Set(Array.from({ length: Math.max(0, w.length - 2) }, (_, i) => w.slice(i, i + 3)));
  const x = grams(a);
  const y = grams(b);
  let shared = 0;
  for (const g of x) if (y.has(g)) shared++;
  return x.size + y.size === 0 ? 0 : (2 * shared) / (x.size + y.size);
}

/** The forms a model may write a tool's name in: "app:tool", "app__tool", "app.tool", "app/tool" and bare "tool". */
function nameForms(name: string): string[] {
  const lower = name.toLowerCase();
  const colon = lower.indexOf(":");
  if (colon < 0) return [lower];
  const [app, tool] = [lower.slice(0, colon), lower.slice(colon + 1)];
  return [lower, `${app}__${tool}`, `${app}.${tool}`, `${app}/${tool}`, tool];
}

/**
 * Names the query may be: the whole query in any form, or any word in it written as a name: qualified
 * ("use calendar:create_event", "slack.send_message") or an identifier ("the create_pull_request tool"). A plain word inside a sentence is
 * not one: "play some jazz" is not a request for a tool named "play", though music:play will rank on its own.
 */
function exactCandidates(text: string): string[] {
  const written = text.split(/[\s,;]+/).map((word) => word.replace(/^[`'"(]+|[`'".)?!]+$/g, ""));
  return [text, ...written.filter((word) => /[:_./]/.test(word))];
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function round(score: number): number {
  return Math.round(score * 10_000) / 10_000;
}
