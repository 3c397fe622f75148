/**
 * Tokens whose issuer gave them a recognisable shape: a documented prefix, a
 * fixed length, an embedded marker. Each pattern is written from the issuer's
 * published format; a match is a secret without looking at its surroundings.
 */
import { PRIORITY, type SecretRule } from "./secret-rule";
import { shannonEntropy } from "./secret-values";

const provider = (id: string, keywords: readonly string[], pattern: RegExp, accept?: SecretRule["accept"]): SecretRule => ({
  id,
  priority: PRIORITY.provider,
  keywords,
  pattern,
  ...(accept ? { accept } : {}),
});
const hexAnchored = (rule: SecretRule): SecretRule => ({ ...rule, runAnchor: "hex" });
/** A token that starts with its keyword (its issuer's prefix), so it is looked for only where the prefix is. */
const prefixed = (...args: Parameters<typeof provider>): SecretRule => ({ ...provider(...args), keywordReach: 0 });
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
  prefixed("aws-access-key-id", ["akia", "asia", "abia", "acca"], /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g),
  prefixed("google-api-key", ["aiza"], /\bAIza[\w-]{35}(?![\w-])/g),
  prefixed("google-oauth-client-secret", ["gocspx-"], /\bGOCSPX-[\w-]{28}(?![\w-])/g),
  prefixed("google-oauth-token", ["ya29."], /\bya29\.[\w-]{20,}/g),
  prefixed("github-token", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"], /\b(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59,})\b/g),
  prefixed("gitlab-token", ["glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glcbt-", "gloas-", "glsoat-", "glimt-"], /\bgl(?:pat|dt|rt|ptt|ft|cbt|oas|soat|imt)-[\w.-]{20,}(?<![.-])/g),
  prefixed("npm-token", ["npm_"], /\bnpm_[A-Za-z0-9]{36}\b/g),
  prefixed("pypi-token", ["pypi-age"], /\bpypi-AgE[\w-]{50,}/g),
  prefixed("docker-hub-token", ["dckr_pat_", "dckr_oat_"], /\bdckr_(?:pat|oat)_[\w-]{20,}/g),
  prefixed("slack-token", ["xoxa-", "xoxb-", "xoxe", "xoxp-", "xoxr-", "xoxs-", "xapp-"], /\b(?:(?:xoxe\.)?xox[abeprs]-[0-9A-Za-z-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{16,})(?<!-)/g),
  reaching(8, provider("slack-webhook-url", ["hooks.slack.com"], /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/T[A-Z0-9]+\/[A-Z0-9]+\/[A-Za-z0-9]{16,}/g)),
  provider("discord-bot-token", [], /\b[MNO][\w-]{23,27}\.[\w-]{6}\.[\w-]{27,40}(?![\w-])/g, startsWithSnowflake),
  reaching(15, provider("discord-webhook-url", ["discord.com/api/webhooks", "discordapp.com/api/webhooks"], /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d{17,20}\/[\w-]{60,68}/g)),
  // The bot id must start the token, or follow `bot` as in api.telegram.org/bot<token>/; checked after the
  // match because a lookbehind here would be tried at every digit of a log.
  reaching(10, provider("telegram-bot-token", [":aa"], /\d{8,10}:AA[\w-]{33}(?![\w-])/g, (_secret, match, text) => {
    const before = text.charAt(match.index - 1);
    return before === "" || !/[\w:]/.test(before) || text.slice(match.index - 3, match.index) === "bot";
  })),
  prefixed("stripe-secret-key", ["sk_live_", "sk_test_"], /\bsk_(?:live|test)_[0-9A-Za-z]{24,247}\b/g),
  prefixed("stripe-restricted-key", ["rk_live_", "rk_test_"], /\brk_(?:live|test)_[0-9A-Za-z]{24,247}\b/g),
  prefixed("stripe-webhook-secret", ["whsec_"], /\bwhsec_[A-Za-z0-9+/=]{32,}/g),
  hexAnchored(provider("twilio-api-key", [], /\bSK[0-9a-f]{32}\b/g)),
  prefixed("sendgrid-api-key", ["sg."], /\bSG\.[\w-]{22}\.[\w-]{43}(?![\w-])/g),
  hexAnchored(provider("mailgun-api-key", [], /\b(?:key-[0-9a-f]{32}|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})\b/g)),
  hexAnchored(provider("mailchimp-api-key", ["-us"], /\b[0-9a-f]{32}-us\d{1,2}\b/g)),
  prefixed("openai-api-key", ["sk-"], /\bsk-(?:(?:proj|svcacct|admin)-[\w-]{20,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|(?!ant-)[A-Za-z0-9]{32,})(?![\w-])/g, random(3.5)),
  prefixed("anthropic-api-key", ["sk-ant-"], /\bsk-ant-[a-z]{2,8}\d{2}-[\w-]{32,}/g),
  prefixed("huggingface-token", ["hf_"], /\bhf_[A-Za-z0-9]{30,40}\b/g, random(3.5)),
  prefixed("replicate-api-token", ["r8_"], /\br8_[A-Za-z0-9]{37}\b/g),
  prefixed("shopify-token", ["shpat_", "shpca_", "shppa_", "shpss_"], /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g),
  prefixed("age-secret-key", ["age-secret-key-1"], /\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b/g),
];
