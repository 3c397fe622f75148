import { Hono } from "hono";
import * as z from "zod";
import { resolveWith, ResolveBody } from "../artifacts/declare-fields";
import { artifactRef, readArtifact } from "../artifacts/read";
import { storeArtifact, StoreArtifactBody } from "../artifacts/store";
import { ArtifactId, TaskId } from "../protocol/artifacts";
import type { ApiEnv } from "../http/env";
import { conversationInPath } from "../http/conversation";
import { problemResponse, reply } from "../http/problem";
import { json, params, query } from "../http/validate";

/**
 * Task artifacts in R2 (DESIGN §5), under `/v1/conversations/{id}/artifacts`:
 *
 * - `POST …/artifacts` `{task, type, data, summary?, id?}` → 201 ref
 * - `POST …/artifacts/resolve` `{refs: [{pointer, version, sha256?}], fields: [...]}`
 *   → `{values, from, shadowed, missing, read, tokens}` (see src/artifacts/declare-fields.ts)
 * - `GET …/artifacts/{artifactId}?task=&version=` → the ref (HEAD-backed; latest version when absent)
 *
 * Keys derive from the credential's tenant and user, so another tenant's pointer names nothing here.
 */
export const artifacts = new Hono<ApiEnv>();

export const RefQuery = z
  .object({
    task: TaskId,
    version: z.coerce.number().int().min(1).max(999_999_999).optional(),
  })
  .strict();

artifacts.post("/conversations/:id/artifacts", conversationInPath, json(StoreArtifactBody), async (c) => {
  const { id, stub } = c.var.conversation;
  // Artifacts belong to a live conversation of the caller's own.
  const info = await stub.info(c.var.owner);
  if (!info.ok) return problemResponse(c, info.problem);
  if (info.value.endedAt) return problemResponse(c, { type: "conflict", detail: "this conversation has ended" });
  return reply(c, await storeArtifact(c.env.ARTIFACTS, c.var.owner, id, c.req.valid("json")), 201);
});

artifacts.post("/conversations/:id/artifacts/resolve", conversationInPath, json(ResolveBody), async (c) => {
  const { refs, fields } = c.req.valid("json");
  const bucket = c.env.ARTIFACTS;
  const owner = c.var.owner;
  return reply(c, await resolveWith((parts) => readArtifact(bucket, owner, parts, { stale: "conflict" }), c.var.conversation.id, refs, fields));
});

const ArtifactParams = z.object({ artifactId: ArtifactId });

artifacts.get("/conversations/:id/artifacts/:artifactId", conversationInPath, params(ArtifactParams, { type: "not-found", detail: "no such artifact" }), query(RefQuery), async (c) => {
  const { task, version } = c.req.valid("query");
  return reply(c, await artifactRef(c.env.ARTIFACTS, c.var.owner, { conversation: c.var.conversation.id, task, id: c.req.valid("param").artifactId, version }));
});
