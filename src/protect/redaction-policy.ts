/** What the redactor looks for beyond credentials. Cards and SSNs are on unless switched off; e-mail and phone numbers are opt-in. */
import * as z from "zod";

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

export const DEFAULT_REDACTION_POLICY: ResolvedRedactionPolicy = RedactionPolicy.parse({});

export function resolveRedactionPolicy(policy: RedactionPolicy | undefined): ResolvedRedactionPolicy {
  return policy === undefined ? DEFAULT_REDACTION_POLICY : RedactionPolicy.parse(policy);
}
