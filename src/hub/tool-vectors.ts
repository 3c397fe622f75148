import * as z from "zod";
import { sha256Hex } from "../core/version";
import { qualify, splitQualified } from "../protocol/names";
import { embeddingText, rankByCosine, unitVector, type SemanticHit } from "../tools/semantic-search";
import type { ToolRecord } from "./registry";

/** Workers AI's multilingual embedding model: 1024 dimensions, inputs up to 8192 tokens. */
export const EMBEDDING_MODEL = "@cf/baai/bge-m3";
/** How long a search waits for the model (the query's vector, and any tool's still missing) before it answers lexically. */
export const SEARCH_EMBED_DEADLINE_MS = 1500;
/** Vectors computed after an initialize: no one waits for them, but a call that never answers must still end. */
const FILL_DEADLINE_MS = 30_000;
/** Texts per model call. bge-m3's model page states no limit; Cloudflare's other bge models take at most 100. */
const BATCH = 100;

/** What the model answers for `{ text: string[] }`: one vector per text, in order. */
const EmbeddingAnswer = z.object({ data: z.array(z.array(z.number())) });

interface Entry {
  /** Qualified `app:tool`. */
  name: string;
  text: string;
  hash: string;
}

interface Stored {
  hash: string;
  vector: Float32Array;
}

/**
 * The catalog's tool vectors, in the hub's SQLite (table tool_vectors) and, once read, in memory: the hub is their
 * only writer. A vector counts only while its hash matches the tool's text as declared now; a missing one is computed
 * in the background after an initialize, or at search time. Nothing here ever fails an initialize or a search: a
 * model that fails or is slow leaves the search lexical.
 */
export class ToolVectors {
  private stored: Map<string, Stored> | null = null;
  /** The text and hash last computed for each tool, so a search hashes only what changed. */
  private readonly texts = new Map<string, { text: string; hash: string }>();
  /** Model calls under way, by tool and hash: a search waits for the one an initialize started instead of repeating it. */
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly ai: Ai | undefined,
    /** Keeps background work alive past the request that started it. */
    private readonly background: (work: Promise<unknown>) => void,
  ) {}

  /** After an app's initialize, in the background: its tools' vectors that no longer match go, and the missing are computed. */
  async declared(app: string, tools: readonly ToolRecord[]): Promise<void> {
    if (!this.ai) return;
    const entries = await this.entries(tools);
    const current = new Map(entries.map((e) => [e.name, e.hash]));
    const stored = this.load();
    for (const [name, { hash }] of stored) {
      if (!name.startsWith(`${app}:`) || current.get(name) === hash) continue;
      this.storage.sql.exec("DELETE FROM tool_vectors WHERE app = ? AND name = ?", app, splitQualified(name).name);
      stored.delete(name);
    }
    await this.fill(entries.filter((e) => stored.get(e.name)?.hash !== e.hash));
  }

  /**
   * The `tools` closest in meaning to the query, best first; null when there is no model or it did not answer the
   * query in time. Missing vectors are computed alongside the query's (a tool still without one is left out).
   */
  async rank(query: string, tools: readonly ToolRecord[]): Promise<SemanticHit[] | null> {
    if (!this.ai) return null;
    const entries = await this.entries(tools);
    const missing = entries.filter((e) => this.load().get(e.name)?.hash !== e.hash);
    const filling = this.fill(missing);
    this.background(filling);
    let queryVector: Float32Array;
    try {
      [[queryVector]] = (await Promise.all([embed(this.ai, [query], SEARCH_EMBED_DEADLINE_MS), within(filling, SEARCH_EMBED_DEADLINE_MS)])) as [[Float32Array], void];
    } catch (error) {
      console.warn("search_tools: the embedding model did not answer the query; lexical ranking", errorText(error));
      return null;
    }
    const stored = this.load();
    const vectors = new Map<string, Float32Array>();
    for (const e of entries) {
      const found = stored.get(e.name);
      if (found?.hash === e.hash) vectors.set(e.name, found.vector);
    }
    return rankByCosine(queryVector, vectors);
  }

  /** Computes and stores the vectors of `entries`; never rejects (a failure is logged, and the next search tries again). */
  private fill(entries: readonly Entry[]): Promise<void> {
    const ai = this.ai;
    if (!ai || entries.length === 0) return Promise.resolve();
    const key = (e: Entry) => `${e.name}\n${e.hash}`;
    const fresh = entries.filter((e) => !this.inFlight.has(key(e)));
    const waiting = entries.flatMap((e) => (this.inFlight.has(key(e)) ? [this.inFlight.get(key(e))!] : []));
    if (fresh.length > 0) {
      const run = embed(ai, fresh.map((e) => e.text), FILL_DEADLINE_MS)
        .then((vectors) => this.store(fresh, vectors))
        .catch((error) => console.warn(`tool vectors: ${fresh.length} not computed`, errorText(error)))
        .finally(() => fresh.forEach((e) => this.inFlight.delete(key(e))));
      fresh.forEach((e) => this.inFlight.set(key(e), run));
      waiting.push(run);
    }
    return Promise.all(waiting).then(() => undefined);
  }

  private store(entries: readonly Entry[], vectors: readonly Float32Array[]): void {
    const stored = this.load();
    entries.forEach((e, i) => {
      // A tool declared again while its model call was under way keeps the newer text's vector.
      if (this.texts.get(e.name)?.hash !== e.hash) return;
      const vector = vectors[i]!;
      const { app, name } = splitQualified(e.name);
      this.storage.sql.exec("INSERT OR REPLACE INTO tool_vectors (app, name, text_hash, vector) VALUES (?, ?, ?, ?)", app, name, e.hash, vector.buffer);
      stored.set(e.name, { hash: e.hash, vector });
    });
  }

  private load(): Map<string, Stored> {
    if (this.stored) return this.stored;
    const rows = this.storage.sql.exec<{ app: string; name: string; text_hash: string; vector: ArrayBuffer }>("SELECT app, name, text_hash, vector FROM tool_vectors").toArray();
    this.stored = new Map(rows.map((row) => [qualify(row.app, row.name), { hash: row.text_hash, vector: new Float32Array(row.vector.slice(0)) }]));
    return this.stored;
  }

  /** Each tool's embedded text and its hash: SHA-256 of the model id and the text, so another model's vectors never count. */
  private async entries(tools: readonly ToolRecord[]): Promise<Entry[]> {
    return Promise.all(
      tools.map(async (tool) => {
        const text = embeddingText(tool);
        let known = this.texts.get(tool.name);
        if (known?.text !== text) {
          known = { text, hash: await sha256Hex(`${EMBEDDING_MODEL}\n${text}`) };
          this.texts.set(tool.name, known);
        }
        return { name: tool.name, ...known };
      }),
    );
  }
}

/** Unit vectors for `texts`, in order, from as many calls as the batch limit needs, all under one deadline. */
async function embed(ai: Ai, texts: readonly string[], deadlineMs: number): Promise<Float32Array[]> {
  const batches: string[][] = [];
  for (let i = 0; i < texts.length; i += BATCH) batches.push(texts.slice(i, i + BATCH));
  const answers = await deadline(Promise.all(batches.map((text) => ai.run(EMBEDDING_MODEL, { text }))), deadlineMs);
  return answers.flatMap((answer, i) => {
    const parsed = EmbeddingAnswer.safeParse(answer);
    if (!parsed.success || parsed.data.data.length !== batches[i]!.length) throw new Error(`${EMBEDDING_MODEL} answered without one vector per text`);
    return parsed.data.data.map(unitVector);
  });
}

function deadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${EMBEDDING_MODEL} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Waits for `work` at most `ms`, then goes on without it (it carries on in the background). */
function within(work: Promise<void>, ms: number): Promise<void> {
  return deadline(work, ms).catch(() => undefined);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
