import { Hono } from "hono";
import type { ApiEnv } from "../http/env";
import { INSPECTOR_PAGE } from "./page";
import { INSPECTOR_SCRIPT } from "./script";

/**
 * `GET /inspect`: the inspector page (docs/inspector.md). The page itself is public and holds no data: its calls to
 * the API carry the frontend key, which it reads from the URL fragment (never sent here) or a form. The policy lets it
 * run its own inline script and style (pinned by hash) and talk to this origin only.
 */
export const inspectorPage = new Hono<ApiEnv>();

let policy: Promise<string> | null = null;

async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return btoa(String.fromCharCode(...digest));
}

function contentSecurityPolicy(): Promise<string> {
  return (policy ??= sha256(INSPECTOR_SCRIPT).then(
    (hash) => `default-src 'none'; script-src 'sha256-${hash}'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  ));
}

inspectorPage.get("/", async (c) =>
  c.body(INSPECTOR_PAGE, 200, {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": await contentSecurityPolicy(),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
  }),
);
