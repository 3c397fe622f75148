/**
 * Secrets with no prefix of their own, recognised by the name written before
 * them: an AWS secret access key, Azure storage keys, Twilio auth tokens, and
 * the generic `name = value` / `"name": "value"` assignment under a
 * secret-looking name (env files, JSON, YAML, headers, HTML attributes).
 */
import { PRIORITY, type SecretRule } from "./secret-rule";
import { classifySecretKey } from "./secret-keys";
import { isPlaceholder, looksLikeAssignedSecret, shannonEntropy } from "./secret-values";

/** `name=`, `name: `, `"name": "`, `name := '` — what sits between a name and its value. */
const ASSIGN = String.raw`["']?[ \t]*(?::=|=>|=|:)[ \t]*["']?`;
const contextual = (id: string, keywords: readonly string[], name: string, value: string, minBits = 3): SecretRule => ({
  id,
  priority: PRIORITY.contextual,
  keywords,
  pattern: new RegExp(String.raw`(?:${name})${ASSIGN}(?<secret>${value})`, "dgi"),
  accept: (secret) => !isPlaceholder(secret) && shannonEntropy(secret) >= minBits,
});

/** Where the key name written before `at` starts: identifier characters, dots and dashes. */
function keyStart(text: string, at: number): number {
  let start = at;
  while (start > 0 && start > at - 128 && /[\w.-]/.test(text[start - 1]!)) start--;
  return start;
}

const SECRET_ASSIGNMENT: SecretRule = {
  id: "secret-assignment",
  priority: PRIORITY.assignment,
  keywords: ["pass", "pwd", "secret", "token", "key", "auth", "credential", "cookie"],
  // Anchored on the keyword, not the start of the name, so scanning stays linear in long runs of letters.
  // An unquoted value runs to a space, quote, bracket, `,` or `;`, or to an `&` that starts another `name=` (a query string).
  pattern:
    /(?:pass|pwd|secret|token|key|auth|credential|cookie)[\w.-]{0,64}["']?[ \t]*(?::=|=>|=|:)[ \t]*(?:"(?<secretDouble>(?:[^"\\\r\n]|\\.){1,4096})"|'(?<secretSingle>[^'\r\n]{1,4096})'|(?<secret>(?:[^\s"'`,;&<>(){}[\]]|&(?![\w.-]+=)){1,4096}))/dgi,
  accept: (_secret, match, text) => {
    const groups = match.groups ?? {};
    const nameEnd = match.index + match[0].search(/["']?[ \t]*(?::=|=>|=|:)/);
    const key = text.slice(keyStart(text, match.index), nameEnd);
    const keyClass = classifySecretKey(key);
    if (keyClass === null) return false;
    const quoted = groups["secretDouble"] ?? groups["secretSingle"];
    if (quoted !== undefined) return looksLikeAssignedSecret(quoted, keyClass, true);
    const after = text[match.index + match[0].length];
    // `token = getToken()` or `password: see the wiki`: a call or the first word of a sentence, not a value.
    if (after !== undefined && !/[\s"',;&<>)}\]]/.test(after)) return false;
    return looksLikeAssignedSecret(groups["secret"] ?? "", keyClass, false);
  },
};

export const CONTEXTUAL_RULES: readonly SecretRule[] = [
  contextual("aws-secret-access-key", ["secret"], String.raw`aws[\w.-]{0,20}secret[\w.-]{0,20}|secret_?access_?key`, String.raw`[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])`),
  contextual("aws-session-token", ["session", "security-token"], String.raw`aws[\w.-]{0,8}session[\w.-]{0,8}token|session_?token|x-amz-security-token`, String.raw`[A-Za-z0-9/+=]{100,}`),
  contextual("azure-storage-key", ["accountkey", "sharedaccesskey", "storage"], String.raw`AccountKey|SharedAccessKey|azure[\w.-]{0,20}storage[\w.-]{0,20}key`, String.raw`[A-Za-z0-9+/]{40,}={0,2}`),
  contextual("azure-sas-signature", ["sig="], String.raw`[?&;]sig`, String.raw`[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2}`),
  contextual("twilio-auth-token", ["twilio"], String.raw`twilio[\w.-]{0,20}(?:auth[\w.-]{0,4}token|secret)`, String.raw`[0-9a-f]{32}\b`),
  contextual("cohere-api-key", ["cohere", "co_api_key"], String.raw`cohere[\w.-]{0,20}(?:api[\w.-]{0,4}key|token|key)|co_api_key`, String.raw`[A-Za-z0-9]{40}\b`),
  SECRET_ASSIGNMENT,
];
