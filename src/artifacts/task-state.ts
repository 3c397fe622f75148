/**
 * Artifact refs and the task state a model reads: what a step produced, as one
 * line per artifact (type, summary, size, keys, pointer), never the payload.
 * Pure. The ref itself (`ArtifactRef`, the one definition the store, the
 * resolver and the API use) is `src/protocol/artifacts.ts`.
 */
import { markerTitle } from "../core/neutralize";
import { openTag } from "../core/runtime-tag";
import { ARTIFACT_LIMITS } from "../protocol/artifact-limits";
import type { ArtifactRef } from "../protocol/artifacts";
import { displayKey, formatBytes } from "./shape";

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
