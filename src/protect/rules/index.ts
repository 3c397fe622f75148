/** Every redaction rule, in one list; the scanner runs them all and resolves overlaps by priority. */
import { ASSIGNMENT_RULES } from "./assignment";
import { CONTEXTUAL_RULES } from "./contextual";
import { PII_RULES } from "./pii";
import { PROVIDER_RULES } from "./providers";
import { STRUCTURED_RULES } from "./structured";
import type { SecretRule } from "./rule";

export const SECRET_RULES: readonly SecretRule[] = [...PROVIDER_RULES, ...STRUCTURED_RULES, ...CONTEXTUAL_RULES, ...ASSIGNMENT_RULES, ...PII_RULES];

export const RULE_IDS: readonly string[] = [...new Set(SECRET_RULES.map((rule) => rule.id))];
