import { existsSync, readFileSync } from "node:fs";

export interface DevCredentials {
  url: string;
  apiKey: string;
  appTokens: Record<string, string>;
}

/** What `npm run dev` wrote: the local URL, a frontend key and app tokens. */
export function devCredentials(): DevCredentials {
  if (!existsSync(".dev-credentials.json")) {
    console.error("No .dev-credentials.json: start the runtime first with `npm run dev` (in another terminal).");
    process.exit(1);
  }
  return JSON.parse(readFileSync(".dev-credentials.json", "utf8")) as DevCredentials;
}
