/**
 * Deciding whether a value found under a secret-looking name is a secret or
 * just talk about one: placeholders, references to code, prose and values too
 * short or too regular to be credentials are left alone.
 */
import type { SecretKeyClass } from "./keys";

/** Per ASCII character: how often it occurs in the value being measured, and the characters in order of first sight. */
const asciiCounts = new Uint32Array(128);
const asciiSeen = new Uint8Array(128);

/**
 * Shannon entropy in bits per character. Rules and views ask it of thousands of short values in a log, so ASCII
 * values are counted in a table rather than a map; the sum runs over the characters in order of first sight
 * either way, so both give the same bits to the last digit.
 */
export function shannonEntropy(value: string): number {
  if (value.length === 0) return 0;
  let distinct = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 128) {
      asciiCounts.fill(0);
      return mappedEntropy(value);
    }
    const count = asciiCounts[code]!;
    if (count === 0) asciiSeen[distinct++] = code;
    asciiCounts[code] = count + 1;
  }
  let bits = 0;
  for (let k = 0; k < distinct; k++) {
    const code = asciiSeen[k]!;
    const p = asciiCounts[code]! / value.length;
    asciiCounts[code] = 0;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** The same over code points, for values beyond ASCII. */
function mappedEntropy(value: string): number {
  const counts = new Map<string, number>();
  let total = 0;
  for (const char of value) {
    counts.set(char, (counts.get(char) ?? 0) + 1);
    total++;
  }
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / total;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** Names for a value left out, and masks: `****`, `•••` and `···` (what the folded view reads `•` as). */
const PLACEHOLDER =
  /^(?:\$\{\{.*\}\}|\$\{?[\w.:-]+\}?|%\(?\w*\)?[sd]|<[^<>]*>|\{\{.*\}\}|\{[\w.]*\}|[*•·●∙]+|x+|\.{3,}|…|\((?:hidden|redacted|masked|secret|omitted|not shown)\)|n\/a|omitted|\[redacted[^\]]*\]|null|nil|none|undefined|true|false|yes|no|on|off|required|optional|redacted|hidden|masked|secret|password|passwd|pass|pwd|token|changeme|change_me|example|placeholder|dummy|test|your[\w-]*|\w*_here|<redacted>)$/i;
/** `config.apiKey`, `process.env.TOKEN`, `tokens.notes!`, `user?.secret`: member access, not a literal. */
const MEMBER_ACCESS = /^[A-Za-z_$][\w$]*!?(?:\??\.[A-Za-z_$][\w$]*!?)+$/;
/** `/run/secrets/db_password`, `./key.pem`, `~/.aws/credentials`. */
const FILE_PATH = /^(?:~|\.{1,2})?\/(?:[\w.@-]+\/)*[\w.@-]+$/;
/** One word of an identifier or name: `SOME`, `case`, `camelCase`, `PascalCase` (unambiguous, so matching stays linear). */
const NAME_WORD = /^(?:[A-Z]+|[A-Z]?[a-z]+(?:[A-Z][a-z]+)*)$/;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
const HAS_DIGIT_OR_SYMBOL = /[^A-Za-z]/;
/** Words and sentence punctuation: "see the wiki", "Your account password." */
const PROSE = /^[A-Za-z'’-]+(?:[ ,]+[A-Za-z'’-]+)+[.!?:]?$/;

export function isPlaceholder(value: string): boolean {
  return PLACEHOLDER.test(value.trim());
}

/** `SOME_CONSTANT`, `snake_case_name`, `camelCaseName`: what code assigns, where a literal would be a secret. */
function isIdentifier(value: string): boolean {
  return value.split("_").every((word) => NAME_WORD.test(word));
}

/** `MF-Proxy-Shared-Secret`, `R2_S3_CREDENTIALS`: words (a number may end one), which a generated token never is. */
function isWordSequence(value: string): boolean {
  return value.split(/[-_.]/).every((word) => NAME_WORD.test(word.replace(/\d+$/, "")));
}

export function isMemberAccess(value: string): boolean {
  return MEMBER_ACCESS.test(value.replace(/^!{1,2}/, ""));
}

/** A reference to something else in code (`config.token`, `!this.result.ok`, `SOME_CONSTANT`), not a literal. */
export function isCodeReference(value: string): boolean {
  return isMemberAccess(value) || isIdentifier(value);
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
  if (!quoted && isCodeReference(value)) return false;
  const entropy = shannonEntropy(value);
  if (FILE_PATH.test(value) && entropy < 4) return false;
  if (keyClass === "token") {
    if (isWordSequence(value)) return false;
    return /\s/.test(value) ? value.length >= 16 && entropy >= 3.5 : value.length >= 12 && entropy >= 3.0;
  }
  // People choose passwords: short ones count when they mix in a digit or symbol, bare words only when long and irregular.
  if (/^\d{1,7}$/.test(value)) return false;
  return HAS_DIGIT_OR_SYMBOL.test(value) ? value.length >= 6 : value.length >= 12 && entropy >= 3.3;
}

/** Generated text spreads over its alphabet: 12 random hex digits carry about 3 bits a character, `aaaabbbbcccc` 1.6. */
const GENERATED_BITS = 2;
/** A number this long is an id an issuer put in a token (Slack's team and user ids), not a version or a count. */
const LONGEST_WRITTEN_NUMBER = 9;

/**
 * `learn`, `your-token-here`, `EXAMPLE_KEY_2`, `v1.2.3`, `Qwen2Instruct7B`: words and short numbers, however joined
 * (separators, case changes, digits between), with at most one run of one or two letters ("7B"). What a generator
 * writes breaks into many short runs: `aB3xY9kLm2Qp`.
 */
function readsAsWords(value: string): boolean {
  // Digits part words only in mixed case (`Qwen2Instruct7B`); in capitals `QJ8XKZ2` is one run, as base32 writes it,
  // and only a number at its end is set apart (`KEY2`).
  const mixed = /[a-z]/.test(value);
  const runs = value.split(mixed ? /[-_.]|(?<=\d)(?=\D)|(?<=\D)(?=\d)/ : /[-_.]/).filter((run) => run !== "");
  let short = 0;
  for (const run of runs) {
    if (/^\d+$/.test(run)) {
      if (run.length > LONGEST_WRITTEN_NUMBER) return false;
      continue;
    }
    const word = mixed ? run : run.replace(/\d+$/, "");
    if (!NAME_WORD.test(word)) return false;
    if (word.split(/(?=[A-Z][a-z])/).some((part) => part.length < 3) && ++short > 1) return false;
  }
  return true;
}

/**
 * Whether the body of a prefixed token cut short (what follows `ghp_`, `sk-`, `AKIA`) reads as generated
 * rather than written: not a placeholder, not words and numbers, spread over its alphabet, and mixing what a
 * generator mixes (letters with digits, both cases, or a long number), so `sk-learn`-style names stay.
 */
export function looksGenerated(body: string): boolean {
  if (isPlaceholder(body) || readsAsWords(body) || shannonEntropy(body) < GENERATED_BITS) return false;
  const letters = body.replace(/[^A-Za-z]/g, "").length;
  const digits = body.replace(/\D/g, "").length;
  if (letters === 0) return digits > LONGEST_WRITTEN_NUMBER;
  return digits > 0 || (/[A-Z]/.test(body) && /[a-z]/.test(body));
}
