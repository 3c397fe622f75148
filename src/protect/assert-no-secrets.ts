/**
 * A guard for tests and for callers that want to fail loudly: throws when
 * any redaction rule matches. The error names the rules and where they fired,
 * never the values, so it is safe to print.
 */
import { redact, redactJson, type RedactionPolicy, type SecretHit } from "./redact";

export interface SecretFinding {
  /** Index of the message, or 0 when a single text was checked. */
  index: number;
  rules: string[];
}

export class SecretsFoundError extends Error {
  constructor(readonly findings: readonly SecretFinding[]) {
    super(`secrets found: ${findings.map((f) => `message ${f.index}: ${f.rules.join(", ")}`).join("; ")}`);
    this.name = "SecretsFoundError";
  }
}

export function assertNoSecrets(messages: readonly { content?: unknown }[] | string, policy?: RedactionPolicy): void {
  const contents = typeof messages === "string" ? [messages] : messages.map((message) => message.content);
  const findings: SecretFinding[] = [];
  contents.forEach((content, index) => {
    const hits = contentHits(content, policy);
    if (hits.length > 0) findings.push({ index, rules: [...new Set(hits.map((hit) => hit.rule))] });
  });
  if (findings.length > 0) throw new SecretsFoundError(findings);
}

function contentHits(content: unknown, policy: RedactionPolicy | undefined): SecretHit[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return redact(content, policy).hits;
  // Structured content (OpenAI content parts, tool arguments): walk it, so secret-looking keys count too.
  return redactJson(content, policy).hits;
}
