/**
 * Secrets recognised by the structure around them rather than by an issuer's
 * prefix: PEM private key blocks, JWTs, passwords inside URLs, HTTP credentials.
 */
import { PRIORITY, type SecretRule } from "./rule";
import { isMemberAccess, isPlaceholder, shannonEntropy } from "./values";

const AUTH_SCHEMES = new Set(["bearer", "basic", "token", "bot", "digest", "negotiate", "ntlm", "apikey"]);
const AFTER_SCHEME = /(?:bearer|basic|token|bot|apikey|sso-key)[ \t]+$/i;

/**
 * `request.headers.get` after `authorization =` is code reading a header, not a credential. After a scheme
 * (`Bearer …`) a dotted value is a token68 (RFC 6750: `.` `~` `+` `/` `=` are allowed), unless it reads as code:
 * a lower-case first name and no digit (`this.accessToken`).
 */
const credential = (secret: string, match: RegExpExecArray) => {
  if (isPlaceholder(secret) || AUTH_SCHEMES.has(secret.toLowerCase())) return false;
  if (!isMemberAccess(secret)) return true;
  const scheme = AFTER_SCHEME.test(match[0].slice(0, match[0].length - secret.length));
  return scheme && !(/^[a-z_$]/.test(secret) && !/\d/.test(secret));
};

export const STRUCTURED_RULES: readonly SecretRule[] = [
  {
    id: "pem-private-key",
    priority: PRIORITY.structured,
    keywords: ["private key"],
    // `-----BEGIN ` and a label (`ENCRYPTED `, `OPENSSH `, `PGP `) before the keyword.
    keywordReach: 64,
    // The whole block when its END line is there; when output was cut, everything from BEGIN through the
    // base64 lines that follow: after real or JSON-escaped (`\n`) newlines, or, flattened to one line, after
    // spaces or nothing, in chunks of 16 or more (so the words of a sentence after the key stay).
    pattern:
      /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----(?:[\s\S]{0,65536}?-----END \1PRIVATE KEY\2-----|(?:(?:\r?\n|(?:\\r)?\\n)(?:[A-Za-z0-9+/=]+|[A-Za-z-]+: ?[^\r\n\\]*)?|[ \t]*[A-Za-z0-9+/]{16,}={0,2})+)/g,
  },
  {
    id: "jwt",
    keywordReach: 0,
    priority: PRIORITY.structured,
    keywords: ["eyj"],
    pattern: /\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*/g,
  },
  {
    id: "url-password",
    keywordReach: 0,
    priority: PRIORITY.structured,
    keywords: ["://"],
    // scheme://user:password@host — only the password is redacted, so the log still says where it connected.
    pattern: /:\/\/[^\s:/@"'<>]{0,256}:(?<secret>[^\s@/"'<>]{1,256})(?=@[\w.[-])/g,
    // Shorter than four characters is a documentation example (`https://a:b@host`, `abc:xyz@`), and so is a port.
    accept: (secret) => secret.length >= 4 && !isPlaceholder(secret) && !/^\d{1,5}$/.test(secret),
  },
  {
    id: "authorization-header",
    keywordReach: 0,
    priority: PRIORITY.header + 1,
    keywords: ["authorization"],
    pattern:
      /\b(?:proxy-)?authorization(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?(?:(?:bearer|basic|token|bot|apikey|sso-key)[ \t]+)?(?<secret>[\w.~+/=:-]{8,})/gi,
    accept: credential,
  },
  {
    id: "bearer-token",
    keywordReach: 0,
    priority: PRIORITY.header,
    keywords: ["bearer"],
    pattern: /\bbearer[ \t]+(?<secret>[\w.~+/-]{20,}=*)/gi,
    accept: (secret, match) => credential(secret, match) && shannonEntropy(secret) >= 3,
  },
  {
    id: "curl-user-password",
    keywordReach: 0,
    priority: PRIORITY.header,
    keywords: ["-u", "--user"],
    // `curl -u user:password`; a user with no password (`-u alice`) makes curl prompt and is not a secret.
    pattern: /(?<![\w-])(?:-u|--user)(?:[ \t]+|=)["']?[^\s:"'`]+:(?<secret>[^\s"'`]{4,})/g,
    accept: (secret) => !isPlaceholder(secret),
  },
];
