/**
 * The shape every redaction rule shares. A rule is a regular expression plus
 * what it takes to believe a match: the keywords that must occur in the text
 * before the expression runs at all (so a 1 MB log pays for a handful of
 * substring searches, not forty regex scans), and an optional check on the
 * matched value; and the policy that switches the personal-data rules on and off.
 */
import * as z from "zod";

/** What the redactor looks for beyond credentials. Cards and SSNs are on unless switched off; e-mail and phone numbers are opt-in. */
export const RedactionPolicy = z.object({
  pii: z
    .object({
      cards: z.boolean().default(true),
      ssn: z.boolean().default(true),
      email: z.boolean().default(false),
      phone: z.boolean().default(false),
    })
    .prefault({}),
});
/** A policy as a caller writes it: every field optional. */
export type RedactionPolicy = z.input<typeof RedactionPolicy>;
export type ResolvedRedactionPolicy = z.output<typeof RedactionPolicy>;
export type PiiKind = keyof ResolvedRedactionPolicy["pii"];

export const DEFAULT_REDACTION_POLICY: ResolvedRedactionPolicy = RedactionPolicy.parse({});

export function resolveRedactionPolicy(policy: RedactionPolicy | undefined): ResolvedRedactionPolicy {
  return policy === undefined ? DEFAULT_REDACTION_POLICY : RedactionPolicy.parse(policy);
}

export interface SecretRule {
  /** Stable id, shown in `[REDACTED:id]` and in audit records. */
  readonly id: string;
  /** Overlapping hits become one redaction named after the rule with the highest priority. */
  readonly priority: number;
  /** Lower-case substrings; the rule runs only when the lower-cased text contains one. Empty: always runs. */
  readonly keywords: readonly string[];
  /**
   * Global. When it has a named group starting `secret` that matched, only that group is redacted; such a
   * group must end the match (anything the pattern needs after it goes in a lookahead), so its place is known
   * without the `d` flag, which would triple the cost of every match.
   */
  readonly pattern: RegExp;
  /** Rejects a match that has the right shape but is not a secret (a placeholder, a failed checksum). */
  readonly accept?: (secret: string, match: RegExpExecArray, text: string) => boolean;
  /** Set on personal-data rules, which the redaction policy switches on and off. */
  readonly pii?: PiiKind;
  /**
   * Every match contains a run of at least 32 hex digits (`hex`), or a stretch of at least 9 digits (`digits`):
   * the rule runs only around such runs, which one pass over the text finds, instead of retrying a character
   * class at every character of a log.
   */
  readonly runAnchor?: "hex" | "digits";
  /**
   * Every match starts at most this many characters before one of the keywords (0: at it, as an issuer's prefix
   * does): the rule is tried only at those places, so a 1 MB text with one token in it pays for a few attempts.
   */
  readonly keywordReach?: number;
}

/** Priorities: a token that names its issuer beats a structure, which beats a header, which beats a guess from a key name. */
export const PRIORITY = {
  provider: 40,
  structured: 30,
  contextual: 25,
  header: 20,
  assignment: 10,
  pii: 5,
} as const;

/** The names of a pattern's `secret…` groups, read once per rule rather than searched for in every match. */
export function secretGroups(pattern: RegExp): readonly string[] {
  return [...pattern.source.matchAll(/\(\?<(secret\w*)>/g)].map((group) => group[1]!);
}

/** Where the secret sits in a match: the `secret…` group that matched (a suffix of the match), else the whole match. */
export function secretSpan(match: RegExpExecArray, groupNames: readonly string[]): { start: number; end: number } {
  const end = match.index + match[0].length;
  const groups = match.groups;
  if (groups) {
    for (const name of groupNames) {
      const secret = groups[name];
      if (secret !== undefined) return { start: end - secret.length, end };
    }
  }
  return { start: match.index, end };
}
