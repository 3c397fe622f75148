// The registry these machines reach serves workerd's Linux binaries only, so `npm install` leaves the
// macOS and Windows optional packages out of package-lock.json and `npm ci` then calls the lock out of
// sync. This puts those entries back (platform-guarded, so they install only where they belong).
// Run `npm run lock:platforms` after any `npm install` that adds or upgrades packages.
import { readFileSync, writeFileSync } from "node:fs";

const lockPath = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, "utf8"));
const platforms = {
  "@cloudflare/workerd-darwin-64": { os: ["darwin"], cpu: ["x64"] },
  "@cloudflare/workerd-darwin-arm64": { os: ["darwin"], cpu: ["arm64"] },
  "@cloudflare/workerd-windows-64": { os: ["win32"], cpu: ["x64"] },
};

let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!path.endsWith("node_modules/workerd") || !entry.optionalDependencies) continue;
  const parent = path.slice(0, -"workerd".length);
  for (const [name, guard] of Object.entries(platforms)) {
    const version = entry.optionalDependencies[name];
    const key = `${parent}${name}`;
    if (!version || lock.packages[key]) continue;
    lock.packages[key] = { version, dev: entry.dev, license: "Apache-2.0", optional: true, ...guard };
    added += 1;
  }
}
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-platforms: ${added} entr${added === 1 ? "y" : "ies"} added`);
