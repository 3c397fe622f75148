/**
 * Artifacts on the wire: task and artifact ids, pointers, and `ArtifactRef`, a stored artifact version as
 * every step sees it. `ArtifactRef` is the one definition of a ref; the store, the resolver and the API all use it.
 */
import * as z from "zod";
import { ARTIFACT_LIMITS } from "./artifact-limits";

const SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;

export const TaskId = z.string().regex(SEGMENT, "a task id: 1-64 letters, digits, '_' or '-'");
export const ArtifactId = z.string().regex(SEGMENT, "an artifact id: 1-64 letters, digits, '_' or '-'");
export const ArtifactType = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, "an artifact type: 1-64 letters, digits, '_', '.', ':' or '-', e.g. 'search_results'");
export const ArtifactVersion = z.number().int().min(1).max(999_999_999);
export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "64 lowercase hex digits");

/** Where an artifact version lives, as the caller names it: no tenant or user (those come from the credential). */
export interface PointerParts {
  conversation: string;
  task: string;
  id: string;
  version: number;
}

const POINTER = /^r2:\/\/artifacts\/([A-Za-z0-9_-]{8,64})\/([A-Za-z0-9_-]{1,64})\/([A-Za-z0-9_-]{1,64})@v([1-9][0-9]{0,8})$/;
export const POINTER_FORMAT = "r2://artifacts/{conversation}/{task}/{id}@v{version}";

export function formatPointer(p: PointerParts): string {
  return `r2://artifacts/${p.conversation}/${p.task}/${p.id}@v${p.version}`;
}

export function parsePointer(text: string): PointerParts | null {
  const m = POINTER.exec(text);
  return m ? { conversation: m[1]!, task: m[2]!, id: m[3]!, version: Number(m[4]) } : null;
}

export const ArtifactPointer = z
  .string()
  .max(256)
  .refine((s) => parsePointer(s) !== null, `an artifact pointer: ${POINTER_FORMAT}`);

/** A stored artifact version as every step sees it: enough to decide what to ask for, never the data. */
export const ArtifactRef = z
  .object({
    id: ArtifactId,
    task: TaskId,
    type: ArtifactType,
    /** Stable and opaque: `r2://artifacts/{conversation}/{task}/{id}@v{version}`. */
    pointer: ArtifactPointer,
    /** The producer's summary (redacted), or a generated structural one. */
    summary: z.string().max(ARTIFACT_LIMITS.summaryChars),
    /** Bytes of the stored JSON. */
    sizeBytes: z.number().int().min(0),
    /** Top-level keys, or for a list, the union of its items' keys; bounded (see `keyCount`). */
    schemaKeys: z.array(z.string()).max(ARTIFACT_LIMITS.schemaKeys),
    /** How many distinct keys there are, of which `schemaKeys` lists the first. */
    keyCount: z.number().int().min(0),
    /** Of the stored bytes. */
    sha256: Sha256Hex,
    version: ArtifactVersion,
    /** How many values were redacted before storing (the count only). */
    redacted: z.number().int().min(0),
    createdAt: z.string().max(64),
  })
  .strict();
export type ArtifactRef = z.infer<typeof ArtifactRef>;
