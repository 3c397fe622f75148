/**
 * Artifact refs and the task state a model reads: what a step produced, as one
 * line per artifact (type, summary, size, keys, pointer), never the payload.
 * Pure. `ArtifactRef` is the one definition of a ref; the store, the resolver
 * and the API all use it.
 */
import { z } from "zod";
import { markerTitle } from "../core/neutralize";
import { openTag } from "../core/runtime-tag";
import { ARTIFACT_LIMITS } from "./limits";
import { displayKey, formatBytes } from "./shape";

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

/** Producer text on one line of the block: one line, no brackets, no runtime tags (`task_state` among them) or markers, bounded. */
function dataText(text: string, maxChars: number, nonce: string | null | undefined): string {
  return markerTitle(text, maxChars, nonce);
}

function keysText(ref: ArtifactRef): string {
  const keys = ref.schemaKeys.map(displayKey).join(", ");
  const more = ref.keyCount - ref.schemaKeys.length;
  return more > 0 ? `${keys}, +${more} more` : keys;
}

/** True when the summary is the generated structural one, which already says type, size and keys. */
function isStructural(ref: ArtifactRef): boolean {
  return ref.summary.startsWith(`${ref.type}, ${formatBytes(ref.sizeBytes)}: `);
}

/** One artifact as the model reads it: type, summary, size, keys and pointer. Producer text cannot break the line, forge a marker or close the block. */
export function taskStateLine(ref: ArtifactRef, nonce?: string | null): string {
  const notes: string[] = [];
  let head: string;
  if (isStructural(ref)) {
    head = dataText(ref.summary, ARTIFACT_LIMITS.summaryChars, nonce);
  } else {
    head = `${ref.type}, ${formatBytes(ref.sizeBytes)}: ${dataText(ref.summary, ARTIFACT_LIMITS.summaryChars, nonce)}`;
    if (ref.schemaKeys.length > 0) notes.push(`keys: ${dataText(keysText(ref), 4_000, nonce)}`);
  }
  if (ref.redacted > 0) notes.push(`${ref.redacted} value${ref.redacted === 1 ? "" : "s"} redacted`);
  return `- ${head}${notes.length > 0 ? ` (${notes.join("; ")})` : ""} → ${ref.pointer}`;
}

/** The `<task_state>` block around artifact lines (a budget may have left some out). */
export function wrapTaskState(lines: readonly string[], nonce?: string | null): string {
  const header = `Artifacts (${lines.length}): payloads are stored, not shown. Ask for fields by key, JSON Pointer, or across a list; cite the pointer.`;
  return `${openTag("task_state", nonce)}\n${[header, ...lines].join("\n")}\n</task_state>`;
}

/** The task state a model reads for a turn, or "" when there are no artifacts. */
export function renderTaskState(refs: readonly ArtifactRef[]): string {
  return refs.length === 0 ? "" : wrapTaskState(refs.map((ref) => taskStateLine(ref)));
}
