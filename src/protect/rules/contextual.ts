/**
 * Issuers' secrets with no prefix of their own, recognised by the name written
 * before them: an AWS secret access key or session token, Azure storage keys
 * and SAS signatures, Twilio auth tokens, Cohere keys.
 */
import { PRIORITY, type SecretRule } from "./rule";
import { isPlaceholder, shannonEntropy } from "./values";

/** `name=`, `name: `, `"name": "`, `name := '`, and the same inside escaped JSON (`\"name\":\"`). */
const ASSIGN = String.raw`(?:\\?["'])?[ \t]*(?::=|=>|=|:)[ \t]*(?:\\?["'])?`;
/** `reach`: how far before its keyword the name can start (`aws_` … `secret`). */
const contextual = (id: string, keywords: readonly string[], reach: number, name: string, value: string, minBits = 3): SecretRule => ({
  id,
  priority: PRIORITY.contextual,
  keywords,
  keywordReach: reach,
  pattern: new RegExp(String.raw`(?:${name})${ASSIGN}(?<secret>${value})`, "gi"),
  accept: (secret) => !isPlaceholder(secret) && shannonEntropy(secret) >= minBits,
});

export const CONTEXTUAL_RULES: readonly SecretRule[] = [
  contextual("aws-secret-access-key", ["secret"], 23, String.raw`aws[\w.-]{0,20}secret[\w.-]{0,20}|secret_?access_?key`, String.raw`[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])`),
  contextual("aws-session-token", ["session", "security-token"], 11, String.raw`aws[\w.-]{0,8}session[\w.-]{0,8}token|session_?token|x-amz-security-token`, String.raw`[A-Za-z0-9/+=]{100,}`),
  contextual("azure-storage-key", ["accountkey", "sharedaccesskey", "storage"], 25, String.raw`AccountKey|SharedAccessKey|azure[\w.-]{0,20}storage[\w.-]{0,20}key`, String.raw`[A-Za-z0-9+/]{40,}={0,2}`),
  contextual("azure-sas-signature", ["sig="], 1, String.raw`[?&;]sig`, String.raw`[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2}`),
  contextual("twilio-auth-token", ["twilio"], 0, String.raw`twilio[\w.-]{0,20}(?:auth[\w.-]{0,4}token|secret)`, String.raw`[0-9a-f]{32}\b`),
  contextual("cohere-api-key", ["cohere", "co_api_key"], 0, String.raw`cohere[\w.-]{0,20}(?:api[\w.-]{0,4}key|token|key)|co_api_key`, String.raw`[A-Za-z0-9]{40}\b`),
];
