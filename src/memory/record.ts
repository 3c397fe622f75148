/**
 * What one KV key holds: the value is the memory's JSON record; the metadata
 * (≤ 1,024 bytes, returned by `list()`) carries everything the read gate
 * scores on, so a search ranks a whole level from its listing and fetches
 * only the memories it returns.
 */
import * as z from "zod";
import { countTokens } from "../core/tokens";
import type { Level } from "./keys";
import { MEMORY_LIMITS } from "./limits";
import { minhash, MINHASH_SLOTS, shingles, termFrequencies } from "./text";

export type Trust = "curated" | "captured";

/** The value of a memory's key. */
export const MemoryRecord = z.object({
  id: z.string(),
  text: z.string(),
  source: z.string(),
  /** curated: a person approved it; captured: the system wrote it down. */
  trust: z.enum(["curated", "captured"]),
  createdAt: z.string(),
  reinforcedAt: z.string().optional(),
  /** How many times it was written: 1, then +1 for each near-duplicate that reinforced it. */
  reinforcement: z.number().int().min(1),
  /** Tokens of its text as the fence renders it. */
  tokens: z.number().int().min(0),
  /** The full term frequencies, kept only when they did not all fit in the metadata. */
  terms: z.record(z.string(), z.number().int().min(1)).optional(),
});
export type MemoryRecord = z.infer<typeof MemoryRecord>;

/**
 * Compact metadata. `t` is "term term*3 …" (frequency after '*' when above 1),
 * highest frequency first, cut to fit; `x` marks a cut list (the record then
 * carries all terms). `h` is the MinHash sketch of the word shingles.
 */
export const Metadata = z.object({
  v: z.literal(1),
  c: z.number(),
  r: z.number().optional(),
  k: z.number().int().min(1),
  u: z.enum(["c", "p"]),
  o: z.number().int().min(0),
  n: z.number().int().min(0),
  s: z.string(),
  t: z.string(),
  h: z.string(),
  x: z.literal(1).optional(),
});
type Metadata = z.infer<typeof Metadata>;

/** One memory as the read gate sees it: what its listing metadata says. */
export interface IndexEntry {
  id: string;
  key: string;
  level: Level;
  terms: Map<string, number>;
  /** Number of index terms in the full text (BM25's document length). */
  length: number;
  createdAt: number;
  reinforcedAt?: number;
  reinforcement: number;
  trust: Trust;
  tokens: number;
  source: string;
  sketch: number[];
  /** The term list in the metadata was cut; the record has all of them. */
  partial: boolean;
  /** The record, on entries a write made (never on cached listings, which hold no texts). */
  record?: MemoryRecord;
}

export interface NewMemory {
  id: string;
  text: string;
  source: string;
  trust: Trust;
  now: number;
}

/** A new memory's record; `renderedText` is how the fence will show the text, which is what its tokens count. */
export function buildRecord(m: NewMemory, renderedText: (text: string) => string): MemoryRecord {
  return {
    id: m.id,
    text: m.text,
    source: m.source,
    trust: m.trust,
    createdAt: new Date(m.now).toISOString(),
    reinforcement: 1,
    tokens: countTokens(renderedText(m.text)),
  };
}

/** The metadata for a record, and the record with its full terms when they did not fit. */
export function encode(record: MemoryRecord): { record: MemoryRecord; metadata: Metadata } {
  const tf = termFrequencies(record.text);
  const length = [...tf.values()].reduce((a, b) => a + b, 0);
  const base: Metadata = {
    v: 1,
    c: Date.parse(record.createdAt),
    ...(record.reinforcedAt ? { r: Date.parse(record.reinforcedAt) } : {}),
    k: record.reinforcement,
    u: record.trust === "curated" ? "c" : "p",
    o: record.tokens,
    n: length,
    s: record.source,
    t: "",
    h: minhash(shingles(record.text))
      .map((v) => v.toString(36))
      .join("."),
  };
  const room = MEMORY_LIMITS.metadataBytes - bytes(JSON.stringify({ ...base, x: 1 }));
  const ordered = [...tf].sort(([a, fa], [b, fb]) => fb - fa || b.length - a.length || (a < b ? -1 : a > b ? 1 : 0));
  const parts: string[] = [];
  let used = 0;
  for (const [term, f] of ordered) {
    const part = f > 1 ? `${term}*${f}` : term;
    // JSON escaping of non-ASCII is not applied by JSON.stringify, so UTF-8 bytes are what counts.
    const cost = bytes(part) + (parts.length > 0 ? 1 : 0);
    if (used + cost > room) break;
    parts.push(part);
    used += cost;
  }
  const partial = parts.length < ordered.length;
  const metadata: Metadata = { ...base, t: parts.join(" "), ...(partial ? { x: 1 as const } : {}) };
  const { terms: _drop, ...rest } = record;
  return { record: partial ? { ...rest, terms: Object.fromEntries(tf) } : rest, metadata };
}

/** An index entry from a listed key's metadata, or null when the metadata is not this layer's. */
export function decode(id: string, key: string, level: Level, metadata: unknown): IndexEntry | null {
  // Checked by hand rather than with the zod schema: a cold listing decodes thousands of these per request.
  if (!isMetadata(metadata)) return null;
  const m = metadata;
  const sketch = m.h.split(".").map((v) => parseInt(v, 36));
  if (sketch.length !== MINHASH_SLOTS || sketch.some((v) => !Number.isFinite(v))) return null;
  const terms = new Map<string, number>();
  for (const part of m.t.split(" ")) {
    if (part === "") continue;
    const star = part.lastIndexOf("*");
    if (star > 0) terms.set(part.slice(0, star), Number(part.slice(star + 1)) || 1);
    else terms.set(part, 1);
  }
  return {
    id,
    key,
    level,
    terms,
    length: m.n,
    createdAt: m.c,
    ...(m.r !== undefined ? { reinforcedAt: m.r } : {}),
    reinforcement: m.k,
    trust: m.u === "c" ? "curated" : "captured",
    tokens: m.o,
    source: m.s,
    sketch,
    partial: m.x === 1,
  };
}

function isMetadata(m: unknown): m is Metadata {
  if (typeof m !== "object" || m === null) return false;
  const o = m as Record<string, unknown>;
  const count = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 0;
  return (
    o.v === 1 &&
    typeof o.c === "number" &&
    Number.isFinite(o.c) &&
    (o.r === undefined || (typeof o.r === "number" && Number.isFinite(o.r))) &&
    count(o.k) &&
    (o.k as number) >= 1 &&
    (o.u === "c" || o.u === "p") &&
    count(o.o) &&
    count(o.n) &&
    typeof o.s === "string" &&
    typeof o.t === "string" &&
    typeof o.h === "string" &&
    (o.x === undefined || o.x === 1)
  );
}

/** The index entry a write produces, so the writer's own listing sees it at once. */
export function entryOf(id: string, key: string, level: Level, record: MemoryRecord, metadata: Metadata): IndexEntry {
  const entry = decode(id, key, level, metadata);
  if (!entry) throw new Error("metadata did not round-trip");
  if (record.terms) entry.terms = new Map(Object.entries(record.terms));
  entry.partial = false;
  entry.record = record;
  return entry;
}

function bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}
