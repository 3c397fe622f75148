/**
 * Mints credentials for a deployment or for local use.
 *   npm run token -- frontend --tenant acme --user alice [--ttl 86400]
 *   npm run token -- app --tenant acme --user alice --app notes [--ttl 86400]
 * The secret comes from $AUTH_SECRET (the value you gave `wrangler secret put AUTH_SECRET`), else .dev.vars.
 */
import { parseArgs } from "node:util";
import { Credential, mintToken } from "../src/http/auth";
import { localSecret } from "./local-secret";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { tenant: { type: "string", default: "local" }, user: { type: "string", default: "dev" }, app: { type: "string" }, ttl: { type: "string" } },
});
const credential = Credential.safeParse({ kind: positionals[0], tenant: values.tenant, sub: values.user, app: values.app });
if (!credential.success) {
  console.error("usage: npm run token -- frontend|app --tenant <t> --user <u> [--app <name>] [--ttl <seconds>]");
  console.error(credential.error.issues.map((i) => `  ${i.path.join(".") || "kind"}: ${i.message}`).join("\n"));
  process.exit(2);
}
console.log(await mintToken(localSecret(false), credential.data, values.ttl ? Number(values.ttl) : undefined));
