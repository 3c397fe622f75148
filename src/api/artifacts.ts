import { Hono, type Context } from "hono";
import * as z from "zod";
import { resolveWith, ResolveBody } from "../artifacts/declare-fields";
import { artifactRef, readArtifact } from "../artifacts/read";
import { storeArtifact, StoreArtifactBody } from "../artifacts/store";
import { ArtifactId, TaskId } from "../protocol/artifacts";
import { conversationStub } from "../conversation/stub";
import { ConversationId } from "../protocol/methods";
import type { ApiEnv } from "./auth";
import { noSuchConversation, problemResponse, reply } from "./problem-response";
import { readJson, readQuery } from "./read-input";

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

type ApiContext = Context<ApiEnv>;

function conversationId(c: ApiContext): string | null {
  const id = ConversationId.safeParse(c.req.param("id"));
  return id.success ? id.data : null;
}

export const RefQuery = z
  .object({
    task: TaskId,
    version: z.coerce.number().int().min(1).max(999_999_999).optional(),
  })
  .strict();

artifacts.post("/conversations/:id/artifacts", async (c) => {
  const id = conversationId(c);
  if (!id) return noSuchConversation(c);
  const body = await readJson(c, StoreArtifactBody);
  if (!body.ok) return problemResponse(c, body.problem);
  // Artifacts belong to a live conversation of the caller's own.
  const info = await conversationStub(c.env, c.var.owner, id).info(c.var.owner);
  if (!info.ok) return problemResponse(c, info.problem);
  if (info.value.endedAt) return problemResponse(c, { type: "conflict", detail: "this conversation has ended" });
  return reply(c, await storeArtifact(c.env.ARTIFACTS, c.var.owner, id, body.value), 201);
});

artifacts.post("/conversations/:id/artifacts/resolve", async (c) => {
  const id = conversationId(c);
  if (!id) return noSuchConversation(c);
  const body = await readJson(c, ResolveBody);
  if (!body.ok) return problemResponse(c, body.problem);
  const bucket = c.env.ARTIFACTS;
  const owner = c.var.owner;
  return reply(c, await resolveWith((parts) => readArtifact(bucket, owner, parts, { stale: "conflict" }), id, body.value.refs, body.value.fields));
});

artifacts.get("/conversations/:id/artifacts/:artifactId", async (c) => {
  const id = conversationId(c);
  if (!id) return noSuchConversation(c);
  const artifactId = ArtifactId.safeParse(c.req.param("artifactId"));
  if (!artifactId.success) return problemResponse(c, { type: "not-found", detail: "no such artifact" });
  const query = readQuery(c, RefQuery);
  if (!query.ok) return problemResponse(c, query.problem);
  return reply(c, await artifactRef(c.env.ARTIFACTS, c.var.owner, { conversation: id, task: query.value.task, id: artifactId.data, version: query.value.version }));
});
