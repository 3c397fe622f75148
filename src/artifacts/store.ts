/**
 * Artifacts in R2: one JSON object per version under
 * `art/{tenant}/{user}/{conversation}/{task}/{id}/v{version}.json`, its ref in
 * the object's custom metadata (so a HEAD answers a ref without the body).
 *
 * - Tenant and user come from the credential and appear only in the key, never
 *   in a pointer: resolving a pointer re-derives the key from whoever asks.
 * - Secrets never land: string leaves (and the summary) are redacted first.
 * - Versions are allocated with a create-only conditional put (`If-None-Match: *`),
 *   so two writers can never both take v{n}; the loser lists again and takes
 *   the next one. The newest `versionsKept` versions are kept.
 */
import * as z from "zod";
import { fail, ok, type Result } from "../core/problem";
import { sha256Hex } from "../core/version";
import type { Owner } from "../protocol/owner";
import { redactJson } from "../protect";
import { ARTIFACT_LIMITS } from "../protocol/artifact-limits";
import { cut, formatBytes, nestsDeeperThan, schemaKeysOf, structuralSummary } from "./shape";
import { artifactPrefix, listVersions, objectKey } from "./read";
import { ArtifactId, ArtifactRef, ArtifactType, formatPointer, TaskId } from "../protocol/artifacts";

export const StoreArtifactBody = z
  .object({
    task: TaskId,
    type: ArtifactType,
    /** Any JSON. */
    data: z
      .unknown()
      .refine((v) => v !== undefined, "data is required: any JSON value")
      .refine((v) => !nestsDeeperThan(v, ARTIFACT_LIMITS.depth), `data may nest ${ARTIFACT_LIMITS.depth} levels deep at most`),
    summary: z.string().min(1).max(ARTIFACT_LIMITS.summaryChars).optional(),
    /** Given: the same id again stores the next version. Absent: a new id. */
    id: ArtifactId.optional(),
  })
  .strict();
export type StoreArtifactBody = z.infer<typeof StoreArtifactBody>;

const encoder = new TextEncoder();

function metadataOf(ref: ArtifactRef): Record<string, string> {
  return {
    id: ref.id,
    task: ref.task,
    type: ref.type,
    summary: ref.summary,
    sizeBytes: String(ref.sizeBytes),
    schemaKeys: JSON.stringify(ref.schemaKeys),
    keyCount: String(ref.keyCount),
    sha256: ref.sha256,
    version: String(ref.version),
    redacted: String(ref.redacted),
    createdAt: ref.createdAt,
  };
}

function metadataBytes(meta: Record<string, string>): number {
  return Object.entries(meta).reduce((n, [k, v]) => n + encoder.encode(k).length + encoder.encode(v).length, 0);
}

function newArtifactId(): string {
  return crypto.randomUUID().replace(/-/g, "").slice(0, 12);
}

/**
 * Stores `input.data` (redacted) as the next version of its artifact and
 * returns the ref. Problems: 400 too deep, 413 too large once serialised,
 * 409 when other writers kept taking the next version.
 */
export async function storeArtifact(bucket: R2Bucket, owner: Owner, conversationId: string, input: StoreArtifactBody, now = new Date()): Promise<Result<ArtifactRef>> {
  if (nestsDeeperThan(input.data, ARTIFACT_LIMITS.depth)) return fail("invalid-request", `data may nest ${ARTIFACT_LIMITS.depth} levels deep at most`);
  const redacted = redactJson(input.data);
  const summaryRedaction = input.summary === undefined ? null : redactJson(input.summary);
  const json = JSON.stringify(redacted.value);
  const bytes = encoder.encode(json);
  if (bytes.length > ARTIFACT_LIMITS.dataBytes) {
    return fail("payload-too-large", `an artifact's data is limited to ${ARTIFACT_LIMITS.dataBytes} bytes as JSON; this one is ${bytes.length} (${formatBytes(bytes.length)})`);
  }
  const keys = schemaKeysOf(redacted.value);
  const summary =
    summaryRedaction === null
      ? structuralSummary(input.type, redacted.value, bytes.length)
      : cut(String(summaryRedaction.value), ARTIFACT_LIMITS.summaryChars);
  const sha256 = await sha256Hex(json);
  const base = {
    task: input.task,
    type: input.type,
    summary,
    sizeBytes: bytes.length,
    schemaKeys: keys.keys,
    keyCount: keys.total,
    sha256,
    redacted: redacted.hits.length + (summaryRedaction?.hits.length ?? 0),
    createdAt: now.toISOString(),
  };

  for (let attempt = 0; attempt < ARTIFACT_LIMITS.versionAttempts; attempt++) {
    const id = input.id ?? newArtifactId();
    const prefix = artifactPrefix(owner, { conversation: conversationId, task: input.task, id });
    const existing = input.id === undefined ? [] : await listVersions(bucket, prefix);
    const version = (existing.at(-1)?.version ?? 0) + 1;
    const parts = { conversation: conversationId, task: input.task, id, version };
    const ref: ArtifactRef = { id, ...base, pointer: formatPointer(parts), version };
    const customMetadata = metadataOf(ref);
    if (metadataBytes(customMetadata) > ARTIFACT_LIMITS.metadataBytes) {
      // Bounded by construction (summary and keys are capped); kept as a guard.
      return fail("payload-too-large", "the artifact's ref does not fit R2's 8 KiB of object metadata; shorten the summary");
    }
    const put = await bucket.put(objectKey(owner, parts), bytes, {
      onlyIf: new Headers({ "If-None-Match": "*" }),
      httpMetadata: { contentType: "application/json" },
      customMetadata,
      sha256,
    });
    if (put === null) continue; // another writer took this version (or this fresh id): allocate again
    const stale = existing.filter((e) => e.version <= version - ARTIFACT_LIMITS.versionsKept).map((e) => e.object.key);
    if (stale.length > 0) await bucket.delete(stale);
    return ok(ref);
  }
  return fail("conflict", input.id === undefined ? "could not allocate a new artifact id; try again" : `other writers kept taking the next version of '${input.id}'; try again`);
}
