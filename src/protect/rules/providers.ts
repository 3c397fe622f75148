/**
 * Tokens whose issuer gave them a recognisable shape: a documented prefix, a
 * fixed length, an embedded marker. Each pattern is written from the issuer's
 * published format; a match is a secret without looking at its surroundings.
 * A prefixed token cut short is one too, when what is left reads as generated.
 */
import { PRIORITY, type SecretRule } from "./rule";
import { looksGenerated, shannonEntropy } from "./values";

const provider = (id: string, keywords: readonly string[], pattern: RegExp, accept?: SecretRule["accept"]): SecretRule => ({
  id,
  priority: PRIORITY.provider,
  keywords,
  pattern,
  ...(accept ? { accept } : {}),
});
const hexAnchored = (rule: SecretRule): SecretRule => ({ ...rule, runAnchor: "hex" });
/** `ghp_xxxx…`, `AKIAXXXX…`, `xoxb-your-bot-token`: what docs write after a prefix, one character over and over, or words. */
const isPlaceholderBody = (body: string) => shannonEntropy(body) < 1 || /^[a-z]+(?:[-_][a-z]+)+$/.test(body);
/** What is left of a token cut short must be this long after its prefix to be taken for one. */
const SHORTEST_CUT = 12;
const cutShort: SecretRule["accept"] = (_secret, match) => looksGenerated(match.groups!["body"]!);
/**
 * A token that starts with its issuer's prefix (its keywords, case aside), so it is looked for only where the
 * prefix is: `prefix` then `rest` is the whole token. The prefix and at least 12 characters of the body's
 * alphabet (`body`, a character class) that read as generated make a second rule under the same id, for the
 * token cut short (quoted in halves, truncated by a log): a fragment of such a token is itself a secret.
 */
const prefixed = (id: string, keywords: readonly string[], prefix: string, body: string, rest: string, accept?: SecretRule["accept"]): SecretRule[] => {
  const filled: SecretRule["accept"] = (secret, match, text) => !isPlaceholderBody(match.groups!["body"]!) && (accept?.(secret, match, text) ?? true);
  const whole: SecretRule = { ...provider(id, keywords, new RegExp(String.raw`\b(?:${prefix})(?<body>${rest})`, "g"), filled), keywordReach: 0 };
  WHOLE_TOKEN_RULES.push(whole);
  return [whole, { ...provider(id, keywords, new RegExp(String.raw`\b(?:${prefix})(?<body>${body}{${SHORTEST_CUT},})(?<![.-])`, "g"), cutShort), keywordReach: 0 }];
};
/** The rules for whole prefixed tokens, filled as they are made: the pieces view stops joining once a token is whole. */
export const WHOLE_TOKEN_RULES: SecretRule[] = [];
/** A token whose keyword comes a few characters in (`https://` before `hooks.slack.com`, the bot id before `:AA`). */
const reaching = (reach: number, rule: SecretRule): SecretRule => ({ ...rule, keywordReach: reach });

/** A random-looking body, so `sk-this-is-not-a-key`-style text in docs is not taken for a key. */
const random = (minBits: number) => (secret: string) => shannonEntropy(secret) >= minBits;

/** Discord bot tokens start with the bot's user id (a decimal snowflake) in base64url. */
function startsWithSnowflake(secret: string): boolean {
  const first = secret.slice(0, secret.indexOf("."));
  try {
    return /^\d{17,20}$/.test(atob(first.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(first.length / 4) * 4, "=")));
  } catch {
    return false;
  }
}

export const PROVIDER_RULES: readonly SecretRule[] = [
  ...prefixed("aws-access-key-id", ["akia", "asia", "abia", "acca"], "AKIA|ASIA|ABIA|ACCA", "[A-Z0-9]", String.raw`[A-Z0-9]{16}\b`),
  ...prefixed("google-api-key", ["aiza"], "AIza", String.raw`[\w-]`, String.raw`[\w-]{35}(?![\w-])`),
  ...prefixed("google-oauth-client-secret", ["gocspx-"], "GOCSPX-", String.raw`[\w-]`, String.raw`[\w-]{28}(?![\w-])`),
  ...prefixed("google-oauth-token", ["ya29."], String.raw`ya29\.`, String.raw`[\w-]`, String.raw`[\w-]{20,}`),
  ...prefixed("github-token", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], "gh[pousr]_", "[A-Za-z0-9]", String.raw`[A-Za-z0-9]{36,251}\b`),
  ...prefixed("github-token", ["github_pat_"], "github_pat_", String.raw`\w`, String.raw`[A-Za-z0-9]{22}_[A-Za-z0-9]{59,}\b`),
  ...prefixed("gitlab-token", ["glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glcbt-", "gloas-", "glsoat-", "glimt-"], "gl(?:pat|dt|rt|ptt|ft|cbt|oas|soat|imt)-", String.raw`[\w.-]`, String.raw`[\w.-]{20,}(?<![.-])`),
  ...prefixed("npm-token", ["npm_"], "npm_", "[A-Za-z0-9]", String.raw`[A-Za-z0-9]{36}\b`),
  ...prefixed("pypi-token", ["pypi-age"], "pypi-AgE", String.raw`[\w-]`, String.raw`[\w-]{50,}`),
  ...prefixed("docker-hub-token", ["dckr_pat_", "dckr_oat_"], "dckr_(?:pat|oat)_", String.raw`[\w-]`, String.raw`[\w-]{20,}`),
  ...prefixed("slack-token", ["xoxa-", "xoxb-", "xoxe", "xoxp-", "xoxr-", "xoxs-"], String.raw`(?:xoxe\.)?xox[abeprs]-`, "[0-9A-Za-z-]", "[0-9A-Za-z-]{10,}(?<!-)"),
  ...prefixed("slack-token", ["xapp-"], "xapp-", String.raw`[\w-]`, String.raw`\d-[A-Z0-9]+-\d+-[a-f0-9]{16,}`),
  reaching(8, provider("slack-webhook-url", ["hooks.slack.com"], /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/T[A-Z0-9]+\/[A-Z0-9]+\/[A-Za-z0-9]{16,}/g)),
  provider("discord-bot-token", [], /\b[MNO][\w-]{23,27}\.[\w-]{6}\.[\w-]{27,40}(?![\w-])/g, startsWithSnowflake),
  reaching(15, provider("discord-webhook-url", ["discord.com/api/webhooks", "discordapp.com/api/webhooks"], /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d{17,20}\/[\w-]{60,68}/g)),
  // The bot id must start the token, or follow `bot` as in api.telegram.org/bot<token>/; checked after the
  // match because a lookbehind here would be tried at every digit of a log.
  reaching(10, provider("telegram-bot-token", [":aa"], /\d{8,10}:AA[\w-]{33}(?![\w-])/g, (_secret, match, text) => {
    const before = text.charAt(match.index - 1);
    return before === "" || !/[\w:]/.test(before) || text.slice(match.index - 3, match.index) === "bot";
  })),
  ...prefixed("stripe-secret-key", ["sk_live_", "sk_test_"], "sk_(?:live|test)_", "[0-9A-Za-z]", String.raw`[0-9A-Za-z]{24,247}\b`),
  ...prefixed("stripe-restricted-key", ["rk_live_", "rk_test_"], "rk_(?:live|test)_", "[0-9A-Za-z]", String.raw`[0-9A-Za-z]{24,247}\b`),
  ...prefixed("stripe-webhook-secret", ["whsec_"], "whsec_", "[A-Za-z0-9+/=]", "[A-Za-z0-9+/=]{32,}"),
  hexAnchored(provider("twilio-api-key", [], /\bSK[0-9a-f]{32}\b/g)),
  ...prefixed("sendgrid-api-key", ["sg."], String.raw`SG\.`, String.raw`[\w.-]`, String.raw`[\w-]{22}\.[\w-]{43}(?![\w-])`),
  hexAnchored(provider("mailgun-api-key", [], /\b(?:key-[0-9a-f]{32}|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})\b/g)),
  hexAnchored(provider("mailchimp-api-key", ["-us"], /\b[0-9a-f]{32}-us\d{1,2}\b/g)),
  ...prefixed("openai-api-key", ["sk-"], "sk-(?:proj|svcacct|admin)-", String.raw`[\w-]`, String.raw`[\w-]{20,}(?![\w-])`, random(3.5)),
  ...prefixed("openai-api-key", ["sk-"], "sk-(?!ant-)", "[A-Za-z0-9]", String.raw`(?:[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{32,})(?![\w-])`, random(3.5)),
  ...prefixed("anthropic-api-key", ["sk-ant-"], "sk-ant-", String.raw`[\w-]`, String.raw`[a-z]{2,8}\d{2}-[\w-]{32,}`),
  ...prefixed("huggingface-token", ["hf_"], "hf_", "[A-Za-z0-9]", String.raw`[A-Za-z0-9]{30,40}\b`, random(3.5)),
  ...prefixed("replicate-api-token", ["r8_"], "r8_", "[A-Za-z0-9]", String.raw`[A-Za-z0-9]{37}\b`),
  ...prefixed("shopify-token", ["shpat_", "shpca_", "shppa_", "shpss_"], "shp(?:at|ca|pa|ss)_", "[a-fA-F0-9]", String.raw`[a-fA-F0-9]{32}\b`),
  ...prefixed("age-secret-key", ["age-secret-key-1"], "AGE-SECRET-KEY-1", "[0-9A-Z]", String.raw`[0-9A-Z]{58}\b`),
];
