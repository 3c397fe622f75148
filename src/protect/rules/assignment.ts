/**
 * A value under a secret-looking name, whatever the syntax: `name=value` lines
 * (env files, logs, query strings), `"name": "value"` (JSON, also escaped
 * inside another JSON string), `name: value` (YAML, headers), HTML
 * attributes, `<name>value</name>` (XML) and `--name value` (command lines).
 * The name is judged word by word and the value by its shape, so prose,
 * code and placeholders under such names are left alone.
 */
import { PRIORITY, type SecretRule } from "./rule";
import { classifySecretKey } from "./keys";
import { looksLikeAssignedSecret } from "./values";

/** Where the key name written before `at` starts: identifier characters, dots and dashes. */
function keyStart(text: string, at: number): number {
  let start = at;
  while (start > 0 && start > at - 128 && isNameChar(text.charCodeAt(start - 1))) start--;
  return start;
}

function isNameChar(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || code === 46 || code === 45;
}

/** The full name around the keyword the match starts with, and whether it announces a secret. */
function nameClass(match: RegExpExecArray, text: string) {
  return classifySecretKey(text.slice(keyStart(text, match.index), match.index + (match.groups?.["name"] ?? "").length));
}

const SECRET_ASSIGNMENT: SecretRule = {
  id: "secret-assignment",
  priority: PRIORITY.assignment,
  keywordReach: 0,
  keywords: ["pass", "pwd", "secret", "token", "key", "auth", "credential", "cookie"],
  // Anchored on the keyword, not the start of the name, so scanning stays linear in long runs of letters.
  // An unquoted value runs to a space, quote, backslash, bracket, `,` or `;`, or to an `&` that starts another
  // `name=` (a query string).
  pattern:
    /(?<name>(?:pass|pwd|secret|token|key|auth|credential|cookie)[\w.-]{0,64})(?:\\?["'])?[ \t]*(?::=|=>|=|:)[ \t]*(?:\\"(?<secretEscaped>[^"\\\r\n]{1,4096})(?=\\")|"(?<secretDouble>(?:[^"\\\r\n]|\\.){1,4096})(?=")|'(?<secretSingle>[^'\r\n]{1,4096})(?=')|(?<secret>(?:[^\s"'`,;&<>(){}[\]\\]|&(?![\w.-]+=)){1,4096}))/gi,
  accept: (_secret, match, text) => {
    const keyClass = nameClass(match, text);
    if (keyClass === null) return false;
    const groups = match.groups ?? {};
    const quoted = groups["secretEscaped"] ?? groups["secretDouble"] ?? groups["secretSingle"];
    if (quoted !== undefined) return looksLikeAssignedSecret(quoted, keyClass, true);
    const after = text[match.index + match[0].length];
    // `token = getToken()` or `password: see the wiki`: a call or the first word of a sentence, not a value.
    if (after !== undefined && !/[\s"',;&<>)}\]\\]/.test(after)) return false;
    return looksLikeAssignedSecret(groups["secret"] ?? "", keyClass, false);
  },
};

const SECRET_XML_ELEMENT: SecretRule = {
  id: "secret-assignment",
  priority: PRIORITY.assignment,
  keywords: ["pass", "pwd", "secret", "token", "key", "auth", "credential"],
  pattern: /<(?<name>[\w.:-]{0,64}(?:pass|pwd|secret|token|key|auth|credential)[\w.:-]{0,64})>(?<secret>[^<>\r\n]{1,4096})(?=<\/\k<name>>)/gi,
  accept: (secret, match) => {
    const keyClass = classifySecretKey(match.groups?.["name"] ?? "");
    return keyClass !== null && looksLikeAssignedSecret(secret, keyClass, true);
  },
};

const CLI_SECRET_FLAG: SecretRule = {
  id: "cli-password",
  priority: PRIORITY.header,
  keywordReach: 0,
  keywords: ["--", "mysql"],
  // `--password value` / `--api-key value` (the `=` form is an assignment), and mysql's `-pvalue`.
  pattern:
    /(?<![\w-])--(?<name>[\w-]{0,32}(?:pass|pwd|secret|token|key|auth)[\w-]{0,32})[ \t]+["']?(?<secret>[^\s"'`<>|-][^\s"'`<>|]{3,4095})|\bmysql(?:dump|admin|sh)?\b[^\n]{0,200}?(?<![\w-])-p(?<secretMysql>[^\s"'`]{4,4096})/gi,
  accept: (secret, match) => {
    const name = match.groups?.["name"];
    if (name === undefined) return looksLikeAssignedSecret(secret, "password", false);
    const keyClass = classifySecretKey(name);
    return keyClass !== null && looksLikeAssignedSecret(secret, keyClass, false);
  },
};

export const ASSIGNMENT_RULES: readonly SecretRule[] = [CLI_SECRET_FLAG, SECRET_ASSIGNMENT, SECRET_XML_ELEMENT];
