/**
 * The trust boundary: the one step every text from outside the runtime passes
 * before it is stored or shown to the model, whatever its channel — the user's
 * message, the model's own replies and tool-call arguments, tool results and
 * denial reasons, app contexts and resources and their titles, persona notes.
 * It neutralises what could pass for the runtime's own structure (tags, notes,
 * the conversation's nonce), then redacts secrets (and PII by policy), so the
 * markers it writes itself are the only runtime notes left in the text.
 * Texts kept outside the conversation (memories, summaries, stubs) are
 * neutralised again when they are shown; see docs/layers.md.
 */
import { neutralize } from "../core/neutralize";
import { redact, redactJson, type RedactionPolicy, type SecretHit } from "./redact";

export interface BoundaryOptions {
  /** The conversation's nonce, when it has one: outside text may not carry it. */
  nonce?: string | null | undefined;
  redaction?: RedactionPolicy | undefined;
}

export interface AdmittedText {
  text: string;
  /** Secrets found: offsets in the neutralised text; `value` is the raw secret, to hash for the audit trail and drop. */
  hits: SecretHit[];
}

export function admitText(text: string, options: BoundaryOptions = {}): AdmittedText {
  return redact(neutralize(text, options.nonce), options.redaction);
}

/**
 * Tool-call arguments are JSON text: each string leaf passes the boundary and
 * the JSON stays valid. Arguments that do not parse pass as plain text.
 */
export function admitJsonText(json: string, options: BoundaryOptions = {}): AdmittedText {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return admitText(json, options);
  }
  const neutral = mapStrings(parsed, (leaf) => neutralize(leaf, options.nonce));
  const redacted = redactJson(neutral, options.redaction);
  const text = JSON.stringify(redacted.value);
  // Untouched arguments are kept byte for byte, as the model wrote them.
  return text === JSON.stringify(parsed) ? { text: json, hits: [] } : { text, hits: redacted.hits };
}

function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [f(k), mapStrings(v, f)]));
  return value;
}
