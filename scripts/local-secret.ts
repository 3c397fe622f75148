import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

const DEV_VARS = ".dev.vars";

/** The signing secret: $AUTH_SECRET, else the one in .dev.vars, else a new one written there for `wrangler dev`. */
export function localSecret(create = true): string {
  if (process.env.AUTH_SECRET) return process.env.AUTH_SECRET;
  if (existsSync(DEV_VARS)) {
    const match = /^AUTH_SECRET\s*=\s*"?([^"\n]+)"?/m.exec(readFileSync(DEV_VARS, "utf8"));
    if (match?.[1]) return match[1];
  }
  if (!create) throw new Error("no AUTH_SECRET: set the environment variable or run `npm run dev` once to create .dev.vars");
  const secret = randomBytes(32).toString("hex");
  writeFileSync(DEV_VARS, `AUTH_SECRET="${secret}"\n`, { flag: "a" });
  return secret;
}
