/** Every redaction rule, in one list; the scanner runs them all and resolves overlaps by priority. */
import { ASSIGNMENT_RULES } from "./rules-assignment";
import { CONTEXTUAL_RULES } from "./rules-contextual";
import { PII_RULES } from "./rules-pii";
import { PROVIDER_RULES } from "./rules-providers";
import { STRUCTURED_RULES } from "./rules-structured";
import type { SecretRule } from "./secret-rule";

export const SECRET_RULES: readonly SecretRule[] = [...PROVIDER_RULES, ...STRUCTURED_RULES, ...CONTEXTUAL_RULES, ...ASSIGNMENT_RULES, ...PII_RULES];

export const RULE_IDS: readonly string[] = [...new Set(SECRET_RULES.map((rule) => rule.id))];
