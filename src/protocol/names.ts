import * as z from "zod";
import { LIMITS } from "./limits";

/** An app, provider or agent name: what appears on either side of the colon in `app:provider`. */
export const Name = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "use letters, digits, '.', '_' or '-', starting with a letter or digit")
  .max(LIMITS.nameChars);

/** `app:provider` or `app:agent`: a name qualified by the app that owns it. */
export const QualifiedName = z
  .string()
  .max(LIMITS.nameChars * 2 + 1)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*:[A-Za-z0-9][A-Za-z0-9._-]*$/,
    "expected 'app:name', e.g. 'notes:editor-state'",
  );
export type QualifiedName = z.infer<typeof QualifiedName>;

export function qualify(app: string, name: string): string {
  return `${app}:${name}`;
}

export function splitQualified(name: string): { app: string; name: string } {
  const colon = name.indexOf(":");
  return { app: name.slice(0, colon), name: name.slice(colon + 1) };
}
