/**
 * Deciding whether a value found under a secret-looking name is a secret or
 * just talk about one: placeholders, references to code, prose and values too
 * short or too regular to be credentials are left alone.
 */
import type { SecretKeyClass } from "./secret-keys";

/** Shannon entropy in bits per character. */
export function shannonEntropy(value: string): number {
  if (value.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1);
  const total = [...value].length;
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / total;
    bits -= p * Math.log2(p);
  }
  return bits;
}

const PLACEHOLDER =
  /^(?:\$\{\{.*\}\}|\$\{?[\w.:-]+\}?|%\(?\w*\)?[sd]|<[^<>]*>|\{\{.*\}\}|\{[\w.]*\}|\*+|•+|x+|\.{3}|…|\[redacted[^\]]*\]|null|nil|none|undefined|true|false|yes|no|on|off|required|optional|redacted|hidden|masked|secret|password|passwd|token|changeme|change_me|example|placeholder|dummy|test|your[\w-]*|\w*_here|<redacted>)$/i;
/** `config.apiKey`, `process.env.TOKEN`, `this.secret`: member access, not a literal. */
const MEMBER_ACCESS = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;
/** `/run/secrets/db_password`, `./key.pem`, `~/.aws/credentials`. */
const FILE_PATH = /^(?:~|\.{1,2})?\/(?:[\w.@-]+\/)*[\w.@-]+$/;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
const LETTERS_ONLY = /^[A-Za-z]+$/;
const HAS_DIGIT_OR_SYMBOL = /[^A-Za-z]/;
/** Words and sentence punctuation: "see the wiki", "Your account password." */
const PROSE = /^[A-Za-z'’-]+(?:[ ,]+[A-Za-z'’-]+)+[.!?:]?$/;

export function isPlaceholder(value: string): boolean {
  return PLACEHOLDER.test(value.trim());
}

/**
 * A value written after `password=` / `"api_key":` / `token:`. `quoted` says it
 * was a string literal, which makes a bare word more likely to be a real value
 * than an identifier or the start of a sentence.
 */
export function looksLikeAssignedSecret(value: string, keyClass: SecretKeyClass, quoted: boolean): boolean {
  if (value.length === 0 || value.length > 4096 || isPlaceholder(value)) return false;
  if (/\s/.test(value) && (!quoted || PROSE.test(value))) return false;
  if (URL_LIKE.test(value)) return false;
  if (!quoted && MEMBER_ACCESS.test(value)) return false;
  if (FILE_PATH.test(value) && shannonEntropy(value) < 4) return false;
  const entropy = shannonEntropy(value);
  if (LETTERS_ONLY.test(value)) {
    // A bare word is usually an identifier or prose; only a long, irregular one is believed.
    return quoted ? value.length >= 12 && entropy >= 3.3 : value.length >= 16 && entropy >= 3.8;
  }
  if (keyClass === "password") return value.length >= 6 && HAS_DIGIT_OR_SYMBOL.test(value) && !/^\d{1,7}$/.test(value);
  if (/\s/.test(value)) return value.length >= 16 && entropy >= 3.5;
  return value.length >= 12 && entropy >= 3.0;
}
