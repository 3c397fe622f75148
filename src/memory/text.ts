/**
 * The text analysis both gates share: words, index terms (for BM25), word
 * shingles and their MinHash sketch (for near-duplicates). Pure and
 * deterministic; the same function analyses a stored memory and a query, which
 * is what makes them comparable.
 */

/** Common English function words: they carry no topic, so they are neither indexed nor counted as information. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all am an and any are aren as at be because been before being below between both but by " +
    "can cannot could couldn did didn do does doesn doing don down during each few for from further had hadn has hasn have haven " +
    "having he her here hers herself him himself his how i if in into is isn it its itself just let ll me more most mustn my myself " +
    "no nor not now of off on once only or other ought our ours ourselves out over own re same shan she should shouldn so some such " +
    "than that the their theirs them themselves then there these they this those through to too under until up ve very was wasn we " +
    "were weren what when where which while who whom why will with won would wouldn you your yours yourself yourselves " +
    "also yes ok okay oh hey hi hello please thanks thank yeah really quite much many thing things stuff etc"
  ).split(" "),
);

const CJK_RUN = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+$/u;
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const MAX_TERM_CHARS = 32;

/** Lower-cased words of the text (letters, marks and digits), in order. CJK runs stay whole here. */
export function words(text: string): string[] {
  return text.normalize("NFKC").toLowerCase().match(WORD) ?? [];
}

/**
 * A light English suffix stripper (plurals, -ing, -ed), so "prefers",
 * "preferred" and "preferring" meet "prefer". Deliberately conservative: it
 * only has to map query and memory words the same way.
 */
export function stem(word: string): string {
  if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
  let w = word;
  if (w.endsWith("ies") && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith("sses")) return w.slice(0, -2);
  if (/(?:ss|us|is)$/.test(w)) return w;
  if (/(?:sh|ch|x|z)es$/.test(w)) return w.slice(0, -2);
  if (w.endsWith("s")) return w.slice(0, -1);
  if (w.endsWith("ing") && w.length - 3 >= 3) w = w.slice(0, -3);
  else if (w.endsWith("ed") && w.length - 2 >= 3) w = w.slice(0, -2);
  else return w;
  // "preferr" → "prefer", "stopp" → "stop"; keep "ll", "ss", "zz" ("install", "pass").
  if (/([b-df-hj-kmnp-rtvwxy])\1$/.test(w)) w = w.slice(0, -1);
  return w;
}

/** Index terms: stemmed words without stop words or single letters; CJK runs as overlapping character bigrams. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text)) {
    if (CJK_RUN.test(word)) {
      const chars = [...word];
      if (chars.length === 1) out.push(word);
      for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
      continue;
    }
    if (word.length < 2 || STOPWORDS.has(word)) continue;
    out.push(stem(word).slice(0, MAX_TERM_CHARS));
  }
  return out;
}

/** Term frequencies of a text. */
export function termFrequencies(text: string): Map<string, number> {
  const tf = new Map<string, number>();
  for (const term of terms(text)) tf.set(term, (tf.get(term) ?? 0) + 1);
  return tf;
}

/**
 * Normalised word shingles: bigrams of stemmed words, stop words included (they
 * carry word order: "tabs over spaces" is not "spaces over tabs"). A text of
 * one word is its own shingle.
 */
export function shingles(text: string): Set<string> {
  const ws = words(text).map(stem);
  const out = new Set<string>();
  if (ws.length === 1) out.add(ws[0]!);
  for (let i = 0; i + 1 < ws.length; i++) out.add(`${ws[i]} ${ws[i + 1]}`);
  return out;
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const s of small) if (large.has(s)) shared++;
  return shared / (a.size + b.size - shared);
}

/** Slots in a MinHash sketch: the estimate's standard error is about √(J(1−J)/16) ≈ 0.1 at J = 0.8. */
export const MINHASH_SLOTS = 16;

/**
 * A MinHash sketch of the shingles: the share of equal slots between two
 * sketches estimates their Jaccard similarity. Small enough to ride in KV
 * metadata, so the duplicate check fetches only the few memories it flags.
 */
export function minhash(shingleSet: ReadonlySet<string>): number[] {
  const sketch = new Array<number>(MINHASH_SLOTS).fill(0xffffffff);
  for (const shingle of shingleSet) {
    const h = fnv1a(shingle);
    for (let i = 0; i < MINHASH_SLOTS; i++) {
      const v = fmix32(h ^ SEEDS[i]!);
      if (v < sketch[i]!) sketch[i] = v;
    }
  }
  return sketch;
}

export function minhashSimilarity(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let equal = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) equal++;
  return equal / a.length;
}

const SEEDS = Array.from({ length: MINHASH_SLOTS }, (_, i) => fmix32(Math.imul(i + 1, 0x9e3779b1)));

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3's finaliser: a cheap, well-mixed 32-bit permutation. */
function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
