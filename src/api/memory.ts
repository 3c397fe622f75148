import { Hono, type Context } from "hono";
import * as z from "zod";
import { ok, PROBLEMS, type Result } from "../core/problem";
import { MemoryId, namespaceFor, ScopeId, type Level } from "../memory/keys";
import { MEMORY_LIMITS } from "../memory/limits";
import { InvalidCursor, MemoryStore, type WriteItem, type WriteOutcome } from "../memory/store";
import type { ApiEnv } from "../http/env";
import { problemResponse } from "../http/problem";
import { json, params, query } from "../http/validate";
import { wellFormed } from "../protocol/text";

/**
 * `/v1/memories/…`: memory in KV, always under the caller's own tenant and
 * user (from the credential). A level is named by `level` with `session` and
 * `task` as it needs them; without `level`, the deepest level the ids name.
 */
export const memories = new Hono<ApiEnv>();

type ApiContext = Context<ApiEnv>;

const LevelName = z.enum(["user", "session", "task"]);
const Source = z
  .string()
  .min(1)
  .max(MEMORY_LIMITS.sourceChars)
  .regex(/^[A-Za-z0-9 _.:/@-]+$/, "use letters, digits, spaces and '_', '.', ':', '/', '@' or '-'");

export const WriteBody = z
  .object({
    text: z.string().min(1).max(MEMORY_LIMITS.textChars, `a memory is at most ${MEMORY_LIMITS.textChars} characters; store documents as artifacts`).transform(wellFormed),
    level: LevelName.optional(),
    session: ScopeId.optional(),
    task: ScopeId.optional(),
    source: Source.optional(),
    /** curated: a person approved it; captured (the default): the system wrote it down. */
    trust: z.enum(["curated", "captured"]).optional(),
  })
  .strict();
type WriteBody = z.infer<typeof WriteBody>;

export const BatchBody = z.object({ memories: z.array(WriteBody).min(1).max(MEMORY_LIMITS.batchItems) }).strict();

const LevelQuery = {
  level: LevelName.optional(),
  session: ScopeId.optional(),
  task: ScopeId.optional(),
};

export const ListQuery = z
  .object({
    ...LevelQuery,
    cursor: z.string().min(1).max(1024).optional(),
    limit: z.coerce.number().int().min(1).max(MEMORY_LIMITS.listPage).optional(),
  })
  .strict();

export const SearchQuery = z
  .object({
    q: z.string().trim().min(1).max(MEMORY_LIMITS.queryChars),
    session: ScopeId.optional(),
    task: ScopeId.optional(),
    limit: z.coerce.number().int().min(1).max(MEMORY_LIMITS.searchResults).optional(),
    threshold: z.coerce.number().min(0).max(10).optional(),
    halfLifeHours: z.coerce.number().positive().max(1e6).optional(),
  })
  .strict()
  .refine((q) => q.task === undefined || q.session !== undefined, { message: "a task needs its session", path: ["task"] });

export const DeleteQuery = z.object(LevelQuery).strict();

const DEFAULT_SOURCE = "api";

function namespaceOf(c: ApiContext, q: { level?: Level | undefined; session?: string | undefined; task?: string | undefined }) {
  const level = q.level ?? (q.task !== undefined ? "task" : q.session !== undefined ? "session" : "user");
  return namespaceFor(c.var.owner, level, q);
}

function invalid(c: ApiContext, detail: string) {
  return problemResponse(c, { type: "invalid-request", detail });
}

/** A refusal of the write gate: 422 problem+json with its stable `reason` and `signal` as extension members. */
function refusal(c: ApiContext, o: Extract<WriteOutcome, { status: "refused" }>): Response {
  const type = o.reason === "level_full" ? "limit-exceeded" : "not-accepted";
  const { status, title } = PROBLEMS[type];
  const body = {
    type: `urn:context-runtime:problem:${type}`,
    title,
    status,
    detail: `not stored: ${o.detail}`,
    reason: o.reason,
    signal: o.signal,
    issues: [{ path: "text", message: `${o.reason} (${o.signal}): ${o.detail}` }],
  };
  return c.body(JSON.stringify(body), status, { "Content-Type": "application/problem+json" });
}

function writeItem(c: ApiContext, body: WriteBody): Result<WriteItem, string> {
  const ns = namespaceOf(c, body);
  if (!ns.ok) return ns;
  return ok({ ns: ns.value, text: body.text, source: body.source ?? DEFAULT_SOURCE, trust: body.trust ?? "captured" });
}

memories.post("/", json(WriteBody), async (c) => {
  const item = writeItem(c, c.req.valid("json"));
  if (!item.ok) return invalid(c, item.problem);
  const [outcome] = await new MemoryStore(c.env.MEMORY).write([item.value]);
  switch (outcome!.status) {
    case "created":
      return c.json({ memory: outcome!.memory }, 201);
    case "reinforced":
      return c.json({ reinforced: outcome!.memory, similarity: outcome!.similarity }, 200);
    case "refused":
      return refusal(c, outcome!);
  }
});

/** Up to 100 memories at once (imports, end-of-session capture): each goes through the same gate, in order. */
memories.post("/batch", json(BatchBody), async (c) => {
  const items: WriteItem[] = [];
  for (const [index, m] of c.req.valid("json").memories.entries()) {
    const item = writeItem(c, m);
    if (!item.ok) return problemResponse(c, { type: "invalid-request", detail: item.problem, issues: [{ path: `memories.${index}`, message: item.problem }] });
    items.push(item.value);
  }
  const results = await new MemoryStore(c.env.MEMORY).write(items);
  const count = (status: WriteOutcome["status"]) => results.filter((r) => r.status === status).length;
  return c.json({ results, created: count("created"), reinforced: count("reinforced"), refused: count("refused") }, 200);
});

memories.get("/search", query(SearchQuery), async (c) => {
  const { q, session, task, limit, threshold, halfLifeHours } = c.req.valid("query");
  const scope = { ...c.var.owner, ...(session !== undefined ? { session } : {}), ...(task !== undefined ? { task } : {}) };
  const found = await new MemoryStore(c.env.MEMORY).search(scope, q, {
    ...(limit !== undefined ? { limit } : {}),
    ...(threshold !== undefined ? { threshold } : {}),
    ...(halfLifeHours !== undefined ? { halfLifeHours } : {}),
  });
  return c.json(found);
});

memories.get("/", query(ListQuery), async (c) => {
  const listed = c.req.valid("query");
  const ns = namespaceOf(c, listed);
  if (!ns.ok) return invalid(c, ns.problem);
  const { cursor, limit } = listed;
  try {
    return c.json(await new MemoryStore(c.env.MEMORY).page(ns.value, { ...(cursor ? { cursor } : {}), ...(limit ? { limit } : {}) }));
  } catch (error) {
    if (error instanceof InvalidCursor) return invalid(c, "the cursor was not issued for this level; start again without it");
    throw error;
  }
});

const MemoryParams = z.object({ id: MemoryId });

memories.delete("/:id", params(MemoryParams, { type: "not-found", detail: "no such memory" }), query(DeleteQuery), async (c) => {
  const ns = namespaceOf(c, c.req.valid("query"));
  if (!ns.ok) return invalid(c, ns.problem);
  const removed = await new MemoryStore(c.env.MEMORY).remove(ns.value, c.req.valid("param").id);
  return removed ? c.json({ deleted: removed }) : problemResponse(c, { type: "not-found", detail: "no such memory in that level" });
});
