/**
 * The KV adapter: one key per memory (see keys.ts), its scoring fields in the
 * key's metadata (record.ts), so a level is read with `list()` alone and only
 * the memories a search returns are fetched.
 *
 * There is no index key and no counter: no write ever reads and rewrites a key
 * other than the memory it concerns (KV allows one write per second per key and
 * takes up to a minute to agree across locations). A near-duplicate rewrites
 * the existing memory's own key with its reinforcement raised.
 *
 * Listing a large level costs one KV operation per 1,000 keys, so each isolate
 * keeps a level's parsed listing for `listingTtlMs`. Writes and deletes through
 * the isolate update it at once; changes made elsewhere appear within that
 * time, well inside KV's own propagation delay.
 */
import { chainOf, idUnder, levelPrefix, memoryKey, newMemoryId, type Level, type Namespace, type Scope } from "./keys";
import { MEMORY_DEFAULTS, MEMORY_LIMITS } from "./limits";
import { buildRecord, decode, encode, entryOf, MemoryRecord, type IndexEntry, type Trust } from "./record";
import { rankMemories, type ScoreOptions, type Scored } from "./score";
import { minhash, minhashSimilarity, shingles } from "./text";
import { fenceText } from "./fence";
import { gateWrite, similarity, type RefusalReason, type RefusalSignal } from "./write-gate";

/** A memory as the API shows it. */
export interface StoredMemory {
  id: string;
  level: Level;
  session?: string;
  task?: string;
  text: string;
  source: string;
  trust: Trust;
  createdAt: string;
  reinforcedAt?: string;
  reinforcement: number;
  tokens: number;
}

export interface WriteItem {
  ns: Namespace;
  text: string;
  source: string;
  trust: Trust;
}

export type WriteOutcome =
  | { status: "created"; memory: StoredMemory }
  | { status: "reinforced"; memory: StoredMemory; similarity: number }
  | { status: "refused"; reason: RefusalReason | "level_full"; signal: RefusalSignal | "level_full"; detail: string };

// ── the isolate's listing cache ──────────────────────────────────────────────

interface Listing {
  entries: Map<string, IndexEntry>;
}
interface Slot {
  at: number;
  promise: Promise<Listing>;
  size: number;
}
const listings = new Map<string, Slot>();

/** Recently read texts, by key, most recent last. */
const texts = new Map<string, string>();

function cachedText(key: string): string | undefined {
  const text = texts.get(key);
  if (text !== undefined) {
    texts.delete(key);
    texts.set(key, text);
  }
  return text;
}

function rememberText(key: string, text: string): void {
  texts.delete(key);
  texts.set(key, text);
  if (texts.size > MEMORY_LIMITS.cachedTexts) texts.delete(texts.keys().next().value!);
}

/** Forget every cached listing and text (tests, and a caller that must see other isolates' writes now). */
export function clearListingCache(): void {
  listings.clear();
  texts.clear();
}

function evict(): void {
  let total = 0;
  for (const slot of listings.values()) total += slot.size;
  for (const [prefix, slot] of listings) {
    if (total <= MEMORY_LIMITS.cachedEntries) break;
    listings.delete(prefix);
    total -= slot.size;
  }
}

/** Applies a change to the cached listing of `prefix`, whether it is loaded or still loading. */
function touchListing(prefix: string, change: (l: Listing) => void): void {
  const slot = listings.get(prefix);
  if (!slot) return;
  void slot.promise.then((l) => {
    change(l);
    slot.size = l.entries.size;
  });
}

// ── the store ────────────────────────────────────────────────────────────────

export class MemoryStore {
  constructor(
    private readonly kv: KVNamespace,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Every memory of one level, from the isolate's cache or a fresh listing. */
  async level(ns: Namespace): Promise<IndexEntry[]> {
    return [...(await this.listing(ns)).entries.values()];
  }

  /** Scores the scope's whole chain (task, session, user) against the query. */
  async rank(scope: Scope, query: string, options: ScoreOptions = {}) {
    const levels = await Promise.all(chainOf(scope).map((ns) => this.level(ns)));
    const candidates = levels.flat();
    return { ...rankMemories(query, candidates, { now: this.clock(), ...options }), candidates: candidates.length };
  }

  /**
   * The records of these entries, fetched unless the entry carries it (this
   * batch's own writes); a key deleted meanwhile is missing from the map.
   */
  async records(entries: readonly IndexEntry[]): Promise<Map<string, MemoryRecord>> {
    const out = new Map<string, MemoryRecord>();
    await Promise.all(
      entries.map(async (e) => {
        const record = e.record ?? (await this.get(e.key));
        if (record) {
          out.set(e.key, record);
          rememberText(e.key, record.text);
        }
      }),
    );
    return out;
  }

  /**
   * The texts of these entries. A memory's text never changes (reinforcement
   * rewrites only its counters, which the listing carries), so the isolate keeps
   * recently read texts and fetches only the rest.
   */
  async texts(entries: readonly IndexEntry[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const missing: IndexEntry[] = [];
    for (const e of entries) {
      const text = e.record?.text ?? cachedText(e.key);
      if (text !== undefined) out.set(e.key, text);
      else missing.push(e);
    }
    for (const [key, record] of await this.records(missing)) out.set(key, record.text);
    return out;
  }

  /** A search: the chain's relevant memories, ranked, with their texts. */
  async search(scope: Scope, query: string, options: ScoreOptions & { limit?: number } = {}) {
    const { relevant, candidates } = await this.rank(scope, query, options);
    const top = relevant.slice(0, options.limit ?? MEMORY_DEFAULTS.searchResults);
    const texts = await this.texts(top.map((s) => s.item));
    const chain = chainOf(scope);
    const results = top
      .filter((s) => texts.has(s.item.key))
      .map((s: Scored<IndexEntry>) => ({
        memory: storedFromEntry(s.item, texts.get(s.item.key)!, chain.find((ns) => ns.level === s.item.level)!),
        score: s.score,
        relevance: s.relevance,
        recency: s.recency,
      }));
    return { results, candidates, matched: relevant.length };
  }

  /**
   * Writes through the gate, in order. Each text is redacted and checked; a
   * near-duplicate of a memory in the same level (this batch's included)
   * reinforces it; the rest are created. Every key is written once, at the end.
   */
  async write(items: readonly WriteItem[]): Promise<WriteOutcome[]> {
    const now = this.clock();
    const nowIso = new Date(now).toISOString();
    interface Pending {
      ns: Namespace;
      record: MemoryRecord;
      before?: MemoryRecord;
    }
    const pending = new Map<string, Pending>();
    const added = new Map<string, IndexEntry[]>(); // by level prefix: what this batch created or changed
    const outcomes: ({ status: "created" | "reinforced"; key: string; similarity: number } | Extract<WriteOutcome, { status: "refused" }>)[] = [];

    for (const item of items) {
      const gate = gateWrite(item.text);
      if (!gate.ok) {
        outcomes.push({ status: "refused", ...gate.refusal });
        continue;
      }
      const prefix = levelPrefix(item.ns);
      const listing = await this.listing(item.ns);
      const overlay = added.get(prefix) ?? [];
      const overlayIds = new Set(overlay.map((e) => e.id));
      const candidates = [...overlay, ...[...listing.entries.values()].filter((e) => !overlayIds.has(e.id))];
      const duplicate = await this.nearDuplicate(gate.text, candidates);
      if (duplicate) {
        const key = duplicate.entry.key;
        const previous = pending.get(key);
        const current = previous?.record ?? duplicate.record;
        const record: MemoryRecord = {
          ...current,
          reinforcement: current.reinforcement + 1,
          reinforcedAt: nowIso,
          trust: current.trust === "curated" || item.trust === "curated" ? "curated" : "captured",
        };
        pending.set(key, { ns: item.ns, record, ...(previous ? (previous.before ? { before: previous.before } : {}) : { before: current }) });
        const { record: stored, metadata } = encode(record);
        added.set(prefix, [entryOf(duplicate.entry.id, key, item.ns.level, stored, metadata), ...overlay.filter((e) => e.id !== duplicate.entry.id)]);
        outcomes.push({ status: "reinforced", key, similarity: duplicate.similarity });
        continue;
      }
      const existing = listing.entries.size + overlay.filter((e) => !listing.entries.has(e.id)).length;
      if (existing >= MEMORY_LIMITS.perLevel) {
        outcomes.push({ status: "refused", reason: "level_full", signal: "level_full", detail: `a level holds at most ${MEMORY_LIMITS.perLevel} memories; delete some first` });
        continue;
      }
      const id = newMemoryId(now);
      const key = memoryKey(item.ns, id);
      const record = buildRecord({ id, text: gate.text, source: item.source, trust: item.trust, now }, fenceText);
      pending.set(key, { ns: item.ns, record });
      const { record: stored, metadata } = encode(record);
      added.set(prefix, [entryOf(id, key, item.ns.level, stored, metadata), ...overlay]);
      outcomes.push({ status: "created", key, similarity: 0 });
    }

    // One put per key. A reinforcement KV refuses (one write per second per key) leaves the memory as it was.
    const failed = new Set<string>();
    await Promise.all(
      [...pending].map(async ([key, p]) => {
        const { record, metadata } = encode(p.record);
        try {
          await this.kv.put(key, JSON.stringify(record), { metadata });
        } catch (error) {
          if (!p.before) throw error;
          failed.add(key);
          return;
        }
        const id = p.record.id;
        const { record: _text, ...entry } = entryOf(id, key, p.ns.level, record, metadata);
        touchListing(levelPrefix(p.ns), (l) => l.entries.set(id, entry));
      }),
    );

    return outcomes.map((o) => {
      if (o.status === "refused") return o;
      const p = pending.get(o.key)!;
      const record = failed.has(o.key) ? p.before! : p.record;
      const memory = toStored(record, p.ns);
      return o.status === "created" ? { status: "created", memory } : { status: "reinforced", memory, similarity: o.similarity };
    });
  }

  /** One page of one level, oldest first, straight from KV. Throws `InvalidCursor` for a cursor this level did not issue. */
  async page(ns: Namespace, options: { cursor?: string; limit?: number }): Promise<{ memories: StoredMemory[]; cursor?: string }> {
    const prefix = levelPrefix(ns);
    const kvCursor = options.cursor === undefined ? undefined : openCursor(prefix, options.cursor);
    const listed = await this.kv.list({ prefix, limit: options.limit ?? MEMORY_LIMITS.listPage, ...(kvCursor ? { cursor: kvCursor } : {}) });
    const keys = listed.keys.map((k) => k.name).filter((name) => idUnder(prefix, name) !== null);
    const records = await Promise.all(keys.map((key) => this.get(key)));
    return {
      memories: records.filter((r): r is MemoryRecord => r !== null).map((r) => toStored(r, ns)),
      ...(listed.list_complete ? {} : { cursor: sealCursor(prefix, listed.cursor) }),
    };
  }

  /** Deletes one memory; null when there was none with that id in that level. */
  async remove(ns: Namespace, id: string): Promise<StoredMemory | null> {
    const key = memoryKey(ns, id);
    const record = await this.get(key);
    if (!record) return null;
    await this.kv.delete(key);
    texts.delete(key);
    touchListing(levelPrefix(ns), (l) => l.entries.delete(id));
    return toStored(record, ns);
  }

  private async get(key: string): Promise<MemoryRecord | null> {
    const parsed = MemoryRecord.safeParse(await this.kv.get(key, "json"));
    return parsed.success ? parsed.data : null;
  }

  /** The best near-duplicate among the candidates: MinHash in the metadata flags a few, their text decides. */
  private async nearDuplicate(text: string, candidates: readonly IndexEntry[]): Promise<{ entry: IndexEntry; record: MemoryRecord; similarity: number } | null> {
    const sketch = minhash(shingles(text));
    const flagged = candidates
      .map((entry) => ({ entry, estimate: minhashSimilarity(sketch, entry.sketch) }))
      .filter((f) => f.estimate >= DUPLICATE_PREFILTER)
      .sort((a, b) => b.estimate - a.estimate || (a.entry.id < b.entry.id ? -1 : 1))
      .slice(0, DUPLICATE_CHECKS);
    const texts = await this.texts(flagged.map((f) => f.entry));
    let best: { entry: IndexEntry; similarity: number } | null = null;
    for (const { entry } of flagged) {
      const other = texts.get(entry.key);
      if (other === undefined) continue;
      const s = similarity(text, other);
      if (s >= MEMORY_DEFAULTS.duplicateJaccard && (!best || s > best.similarity)) best = { entry, similarity: s };
    }
    if (!best) return null;
    // The counters to raise are read fresh from the key itself (or this batch's own record).
    const record = best.entry.record ?? (await this.get(best.entry.key));
    return record ? { ...best, record } : null;
  }

  private listing(ns: Namespace): Promise<Listing> {
    const prefix = levelPrefix(ns);
    const now = Date.now();
    const slot = listings.get(prefix);
    if (slot && now - slot.at < MEMORY_LIMITS.listingTtlMs) {
      listings.delete(prefix); // most recently used last
      listings.set(prefix, slot);
      return slot.promise;
    }
    const fresh: Slot = { at: now, size: 0, promise: this.load(prefix, ns.level) };
    listings.set(prefix, fresh);
    fresh.promise.then(
      (l) => {
        fresh.size = l.entries.size;
        evict();
      },
      () => {
        if (listings.get(prefix) === fresh) listings.delete(prefix);
      },
    );
    return fresh.promise;
  }

  private async load(prefix: string, level: Level): Promise<Listing> {
    const entries = new Map<string, IndexEntry>();
    let cursor: string | undefined;
    do {
      const page: KVNamespaceListResult<unknown, string> = await this.kv.list({ prefix, ...(cursor ? { cursor } : {}) });
      for (const key of page.keys) {
        const id = idUnder(prefix, key.name);
        const entry = id === null ? null : decode(id, key.name, level, key.metadata);
        if (entry) entries.set(entry.id, entry);
      }
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
    // Long memories whose terms did not all fit in the metadata: complete them from their records, within the operation budget.
    const partial = [...entries.values()].filter((e) => e.partial).slice(0, MEMORY_LIMITS.termFetchesPerLoad);
    const records = await this.records(partial);
    for (const e of partial) {
      const terms = records.get(e.key)?.terms;
      if (terms) {
        e.terms = new Map(Object.entries(terms));
        e.partial = false;
      }
    }
    return { entries };
  }
}

/** A cursor names the level it pages through, so garbage or another level's cursor is a clear 400, not KV's guess. */
export class InvalidCursor extends Error {}

function sealCursor(prefix: string, kvCursor: string): string {
  return `${levelTag(prefix)}.${kvCursor}`;
}

function openCursor(prefix: string, cursor: string): string {
  const dot = cursor.indexOf(".");
  if (dot < 0 || cursor.slice(0, dot) !== levelTag(prefix) || dot === cursor.length - 1) throw new InvalidCursor("the cursor is not one this level issued");
  return cursor.slice(dot + 1);
}

function levelTag(prefix: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < prefix.length; i++) h = Math.imul(h ^ prefix.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}

/** MinHash estimates at or above this are checked exactly (an estimate of a true 0.8 falls below 0.4 about once in 5,000). */
const DUPLICATE_PREFILTER = 0.4;
const DUPLICATE_CHECKS = 5;

function storedFromEntry(e: IndexEntry, text: string, ns: Namespace): StoredMemory {
  return {
    id: e.id,
    ...scopeFields(ns),
    text,
    source: e.source,
    trust: e.trust,
    createdAt: new Date(e.createdAt).toISOString(),
    ...(e.reinforcedAt !== undefined ? { reinforcedAt: new Date(e.reinforcedAt).toISOString() } : {}),
    reinforcement: e.reinforcement,
    tokens: e.tokens,
  };
}

function scopeFields(ns: Namespace): Pick<StoredMemory, "level" | "session" | "task"> {
  return {
    level: ns.level,
    ...(ns.session !== undefined && ns.level !== "user" ? { session: ns.session } : {}),
    ...(ns.task !== undefined && ns.level === "task" ? { task: ns.task } : {}),
  };
}

export function toStored(record: MemoryRecord, ns: Namespace): StoredMemory {
  const { terms: _terms, ...rest } = record;
  return {
    id: rest.id,
    ...scopeFields(ns),
    text: rest.text,
    source: rest.source,
    trust: rest.trust,
    createdAt: rest.createdAt,
    ...(rest.reinforcedAt ? { reinforcedAt: rest.reinforcedAt } : {}),
    reinforcement: rest.reinforcement,
    tokens: rest.tokens,
  };
}
