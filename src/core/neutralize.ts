/**
 * App, tool and memory content is data. These functions make sure such content
 * can never produce the runtime's own structure: it cannot open or close a
 * runtime tag (`<system_reminder>` and the fences of later layers), and it
 * cannot start a line that reads as a runtime marker (`[Context updated: …]`).
 */

/** Tags the runtime itself writes; content may mention them, escaped. */
export const RUNTIME_TAGS = ["system_reminder", "context_fence", "memory_fence", "task_state", "persona_switch", "tool_output", "summary_fence"] as const;

const tagNames = RUNTIME_TAGS.map((t) => t.replace(/_/g, "[\\s_-]*")).join("|");
// '<' and its full-width and small-form look-alikes, then an optional '/', then a runtime tag name.
const TAG_OPEN = new RegExp(`[<\\uFF1C\\uFE64](\\s*\\/?\\s*)(${tagNames})`, "giu");
// '[' and its full-width look-alike, then a runtime marker word.
const MARKER_OPEN = /[[\uFF3B](\s*)(context|resource)\b/giu;

export function neutralize(content: string): string {
  return content.replace(TAG_OPEN, "&lt;$1$2").replace(MARKER_OPEN, "\\[$1$2");
}

/** A title sits inside a one-line marker: one line, no brackets, bounded. */
export function markerTitle(title: string, maxChars = 200): string {
  const oneLine = title
    .replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ")
    .replace(/[[\]\uFF3B\uFF3D]/g, (c) => (c === "[" || c === "\uFF3B" ? "(" : ")"))
    .trim();
  return neutralize(oneLine).slice(0, maxChars);
}
