/**
 * What the rest of the runtime uses of protection: the trust boundary every outside text passes, secret and PII
 * redaction, the audit records of what was redacted, and trimming a tool result (or any text) to a token budget.
 * Outside code imports this file only. Inside, each layer builds on the ones before it:
 * rules/ (what a secret looks like) → scan.ts (the rules over a text) → view/ (the text decoded, joined, folded)
 * → detect.ts (the scan over the text and its views) → redact.ts → boundary.ts, trim.ts and token-cut.ts.
 */
export { admitJsonText, admitText, type AdmittedText, type BoundaryOptions } from "./boundary";
export { redact, redactJson, REDACTION_MARKER, RedactionPolicy, type SecretHit } from "./redact";
export { RULE_IDS } from "./rules";
export { AuditRecord, auditRecords, tenantAuditKey } from "./audit";
export { assertNoSecrets, SecretsFoundError, type SecretFinding } from "./assert-no-secrets";
export { protectToolResult, resolveTrimPolicy, trimText, type ProtectedToolResult, type TrimResult } from "./trim";
export { markerSpans, prefixWithin, safeCut, type Span } from "./token-cut";
