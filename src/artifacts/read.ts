/**
 * Reading artifacts back from R2: where a version's object lives (derived from
 * the authenticated owner and the pointer's parts, never from a body), one GET
 * per read with the sha256 of the bytes actually stored, and refs from object
 * metadata (HEAD, or LIST for the latest version). No redaction here: what is
 * stored was redacted on the way in (see store.ts).
 */
import { fail, ok, type Result } from "../core/problem";
import type { Owner } from "../protocol/owner";
import { ARTIFACT_LIMITS } from "../protocol/artifact-limits";
import { ArtifactRef, formatPointer, type PointerParts } from "../protocol/artifacts";

export function artifactPrefix(owner: Owner, p: Omit<PointerParts, "version">): string {
  const seg = encodeURIComponent;
  return `art/${seg(owner.tenant)}/${seg(owner.user)}/${p.conversation}/${p.task}/${p.id}/`;
}

export function objectKey(owner: Owner, p: PointerParts): string {
  return `${artifactPrefix(owner, p)}v${p.version}.json`;
}

/** Where a cleared tool result's full text is kept in R2 (docs/history.md): under its owner and conversation. */
export function resultKey(owner: Owner, conversationId: string, seq: number): string {
  return `results/${owner.tenant}/${owner.user}/${conversationId}/${seq}`;
}

const VERSION_FILE = /\/v([1-9][0-9]*)\.json$/;

/** The stored versions of one artifact, ascending, with their objects. */
export async function listVersions(bucket: R2Bucket, prefix: string, withMetadata = false): Promise<{ version: number; object: R2Object }[]> {
  const found: { version: number; object: R2Object }[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, cursor, ...(withMetadata ? { include: ["customMetadata" as const] } : {}) });
    for (const object of page.objects) {
      const m = VERSION_FILE.exec(object.key);
      if (m && object.key.startsWith(prefix) && !object.key.slice(prefix.length).includes("/")) found.push({ version: Number(m[1]), object });
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return found.sort((a, b) => a.version - b.version);
}

/** The ref an object's metadata carries, or null when it carries none (not written by this store). */
export function refFromMetadata(meta: Record<string, string> | undefined, p: PointerParts): ArtifactRef | null {
  if (!meta) return null;
  let schemaKeys: unknown;
  try {
    schemaKeys = JSON.parse(meta.schemaKeys ?? "null");
  } catch {
    return null;
  }
  const parsed = ArtifactRef.safeParse({
    id: meta.id,
    task: meta.task,
    type: meta.type,
    pointer: formatPointer(p),
    summary: meta.summary,
    sizeBytes: Number(meta.sizeBytes),
    schemaKeys,
    keyCount: Number(meta.keyCount),
    sha256: meta.sha256,
    version: Number(meta.version),
    redacted: Number(meta.redacted),
    createdAt: meta.createdAt,
  });
  return parsed.success && parsed.data.version === p.version && parsed.data.id === p.id && parsed.data.task === p.task ? parsed.data : null;
}

export interface ReadArtifact {
  pointer: string;
  /** Of the stored bytes, as read. */
  sha256: string;
  data: unknown;
}

/**
 * Why a version is not there: never stored (404), or stored and since pruned
 * because newer versions exist (`stale: "conflict"` makes that a 409: the ref
 * is out of date).
 */
async function absent(bucket: R2Bucket, owner: Owner, p: PointerParts, stale: "conflict" | "not-found"): Promise<Result<never>> {
  const pointer = formatPointer(p);
  const versions = await listVersions(bucket, artifactPrefix(owner, p));
  const latest = versions.at(-1)?.version;
  if (latest === undefined) return fail("not-found", `no artifact ${pointer}`);
  if (latest > p.version) {
    return fail(stale, `${pointer} is no longer stored: the artifact is at v${latest} (the newest ${ARTIFACT_LIMITS.versionsKept} versions are kept); use its current ref`);
  }
  return fail("not-found", `no artifact ${pointer}: the latest version is v${latest}`);
}

async function hex(buffer: ArrayBuffer): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", buffer);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** One R2 GET: the artifact's data and the sha256 of the bytes actually stored. */
export async function readArtifact(bucket: R2Bucket, owner: Owner, p: PointerParts, options: { stale: "conflict" | "not-found" }): Promise<Result<ReadArtifact>> {
  const object = await bucket.get(objectKey(owner, p));
  if (!object) return absent(bucket, owner, p, options.stale);
  const pointer = formatPointer(p);
  const buffer = await object.arrayBuffer();
  const sha256 = await hex(buffer);
  const recorded = object.customMetadata?.sha256;
  if (recorded !== undefined && recorded !== sha256) return fail("conflict", `${pointer}: the stored bytes no longer match the sha256 recorded when they were stored`);
  try {
    return ok({ pointer, sha256, data: JSON.parse(new TextDecoder().decode(buffer)) });
  } catch {
    return fail("conflict", `${pointer} is not JSON`);
  }
}

/** The ref of one version (a HEAD), or of the latest when `version` is absent (a LIST, metadata included). */
export async function artifactRef(bucket: R2Bucket, owner: Owner, p: Omit<PointerParts, "version"> & { version?: number | undefined }): Promise<Result<ArtifactRef>> {
  let parts: PointerParts;
  let meta: Record<string, string> | undefined;
  if (p.version !== undefined) {
    parts = { ...p, version: p.version };
    const head = await bucket.head(objectKey(owner, parts));
    if (!head) return absent(bucket, owner, parts, "not-found");
    meta = head.customMetadata;
  } else {
    const latest = (await listVersions(bucket, artifactPrefix(owner, p), true)).at(-1);
    if (!latest) return fail("not-found", `no artifact '${p.id}' in task '${p.task}'`);
    parts = { ...p, version: latest.version };
    meta = latest.object.customMetadata;
    // A listing may leave metadata out; the object's HEAD has it.
    if (!refFromMetadata(meta, parts)) meta = (await bucket.head(latest.object.key))?.customMetadata;
  }
  const ref = refFromMetadata(meta, parts);
  return ref ? ok(ref) : fail("not-found", `no artifact ${formatPointer(parts)}`);
}
