/**
 * Whether a key name (an env variable, a JSON or YAML key, a header, a flag)
 * announces a secret. Names are split into words (`AWS_SECRET_ACCESS_KEY`,
 * `clientSecret`, `x-api-key`) and judged on the words, so `author`,
 * `max_tokens`, `token_type` and `nextPageToken` are not mistaken for secrets.
 */
export type SecretKeyClass = "password" | "token";

/** Words that are a secret on their own. */
const SECRET_WORDS = new Set(["secret", "secrets", "token", "auth", "authorization", "credential", "credentials", "apikey", "apitoken", "privatekey", "secretkey", "accesskey", "appkey", "privkey", "passphrase", "cookie"]);
const PASSWORD_WORDS = new Set(["password", "passwd", "pwd", "passphrase"]);
/** Words that make a following `key` (or `keys`) a secret: `api_key`, `AccountKey`, `signing-key`. */
const KEY_QUALIFIERS = new Set(["api", "secret", "private", "access", "signing", "encryption", "master", "client", "app", "account", "storage", "shared", "session", "license", "service", "hmac", "webhook", "auth", "subscription", "functions", "admin", "root", "deploy", "write", "read"]);
/** A last word that says the value describes a secret rather than being one: `token_type`, `password_min_length`, `secret_arn`. */
const DESCRIPTIVE_SUFFIXES = new Set(["id", "ids", "url", "uri", "urls", "type", "types", "name", "names", "count", "length", "len", "size", "min", "max", "expires", "expiry", "expiration", "exp", "ttl", "at", "time", "timeout", "date", "endpoint", "path", "file", "dir", "field", "fields", "method", "provider", "enabled", "disabled", "required", "policy", "hint", "label", "format", "version", "algorithm", "alg", "kind", "mode", "scope", "scopes", "usage", "limit", "fingerprint", "prefix", "arn", "ref", "location", "env", "var", "source", "header", "param", "regex", "pattern", "rotation", "rotated", "created", "updated", "valid", "index", "hash", "encoding", "options", "config", "overhead", "store", "manager", "factory", "handler", "service", "client", "cache", "storage", "strings", "string", "chars", "message", "msg", "error", "description", "text", "title", "help", "stdin"]);
/** Words that make a token a cursor rather than a credential. */
const NON_SECRET_CONTEXT = new Set(["page", "cursor", "continuation", "pagination", "sync", "next", "prev", "previous", "idempotency", "cache", "sort", "partition", "primary", "foreign", "public", "publishable", "row", "range", "lookup", "i18n", "translation", "map", "object", "dedup", "csrf", "xsrf", "max", "num", "input", "output", "prompt", "completion", "total", "reasoning", "cached"]);

export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

/** Logs repeat the same few names thousands of times; remembering their verdicts keeps scanning fast. */
const verdicts = new Map<string, SecretKeyClass | null>();
const REMEMBERED_NAMES = 4096;

export function classifySecretKey(key: string): SecretKeyClass | null {
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    if (verdicts.size >= REMEMBERED_NAMES) verdicts.clear();
    verdict = classifyWords(keyWords(key));
    verdicts.set(key, verdict);
  }
  return verdict;
}

function classifyWords(words: readonly string[]): SecretKeyClass | null {
  const last = words[words.length - 1];
  if (last === undefined || DESCRIPTIVE_SUFFIXES.has(last)) return null;
  if (words.some((word) => NON_SECRET_CONTEXT.has(word))) return null;
  // `pass` only as the last word (`db_pass`, `SMTP_PASS`), so `pass-arg` and `pass_rate` are left alone.
  if (last === "pass" || words.some((word) => PASSWORD_WORDS.has(word) || word.includes("password") || word.includes("passwd"))) return "password";
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (SECRET_WORDS.has(word)) return "token";
    if ((word === "key" || word === "keys") && i > 0 && KEY_QUALIFIERS.has(words[i - 1]!)) return "token";
  }
  return null;
}
