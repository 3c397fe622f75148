/**
 * The OAuth consent page (`/oauth/authorize`): the runtime knows a user by their frontend API key, so the page asks
 * for it. GET shows which client asks, where its tokens go and the scope; POST checks the key and completes the
 * authorization with props `{tenant, user}`, or declines it.
 *
 * Against forged submissions: the form carries the library's consent handle, single-use and bound to this browser by
 * a SameSite cookie (`beginConsent`/`approveConsent`), and a POST whose `Origin` is another site is refused. The
 * authorization request itself stays server-side: what the form posts never names a client or a redirect.
 * Everything shown is escaped (hono's `html` template); the client's name and scopes are whatever it registered.
 */
import { AuthorizationError, type AuthRequest, type ConsentDescription, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { html } from "hono/html";
import * as z from "zod";
import type { Env } from "../platform/env";
import type { Owner } from "../protocol/owner";
import { frontendOwner } from "./auth";
import { notFound, onError } from "./problem";

type ConsentEnv = { Bindings: Env };

export interface ConsentOptions {
  /** Where the page is served: the provider's `authorizeEndpoint`. */
  path: string;
  /** The scope every grant gets. */
  scope: string;
  /** The OAuth helpers of the provider that serves the request's origin. */
  helpers: (env: Env, origin: string) => OAuthHelpers;
}

/** What the form posts. The key is checked only when the user allows. */
const ConsentForm = z.object({
  handle: z.string().min(1).max(200),
  decision: z.enum(["allow", "deny"]),
  key: z.string().trim().max(4096).default(""),
});

/** An API key is a few hundred bytes: a form far larger is not this page's. */
const MAX_FORM_BYTES = 16 * 1024;

export function consentPage({ path, scope, helpers }: ConsentOptions): Hono<ConsentEnv> {
  const app = new Hono<ConsentEnv>();
  const oauth = (c: Context<ConsentEnv>) => helpers(c.env, new URL(c.req.url).origin);

  app.get(path, async (c) => {
    const api = oauth(c);
    const request = await parse(api, c.req.raw);
    if (request instanceof Response) return request;
    const description = await api.describeConsent(request); // before beginConsent: a failed lookup stores nothing
    const consent = await api.beginConsent(request);
    return page(200, form(description, scope, consent.handle), consent.headers);
  });

  app.post(
    path,
    bodyLimit({ maxSize: MAX_FORM_BYTES, onError: () => page(413, message("The form is too large.")) }),
    async (c) => {
      const origin = c.req.header("Origin");
      if (origin !== undefined && origin !== new URL(c.req.url).origin) return page(403, message("This form can only be sent from this page."));
      const api = oauth(c);
      const request = await parse(api, c.req.raw);
      if (request instanceof Response) return request;
      const fields = ConsentForm.safeParse(await formFields(c.req.raw));
      if (!fields.success) return page(400, message("The form was incomplete. Start again from your app."));
      const { handle, decision, key } = fields.data;
      try {
        if (decision === "deny") {
          const denied = await api.denyConsent(c.req.raw, handle);
          return new Response(null, { status: 302, headers: denied.headers });
        }
        const owner = await frontendOwner(c.env, key);
        if (!owner) {
          const error = key === "" ? "Paste your frontend API key." : "That is not a valid frontend API key.";
          return page(400, form(await api.describeConsent(request), scope, handle, error));
        }
        const approved = await api.approveConsent(c.req.raw, handle, { scope: [scope] });
        const { redirectTo } = await api.completeAuthorization({
          request: approved.request, // the request stored when the page was shown, not the one in this URL
          userId: grantUserId(owner),
          metadata: {},
          scope: approved.request.scope,
          props: owner,
        });
        approved.headers.set("Location", redirectTo);
        return new Response(null, { status: 302, headers: approved.headers });
      } catch (error) {
        // The handle was forged, used, expired, or opened in another browser.
        if (error instanceof AuthorizationError) return page(400, message(`${error.description}.`));
        throw error;
      }
    },
  );

  app.notFound(notFound);
  app.onError(onError);
  return app;
}

/**
 * The authorization request in the URL, or the answer when it is not one: back to the client with the error once its
 * redirect URI is known good, else shown here (never redirect to a URI the client has not registered).
 */
async function parse(api: OAuthHelpers, raw: Request): Promise<AuthRequest | Response> {
  try {
    return await api.parseAuthRequest(raw);
  } catch (error) {
    if (!(error instanceof AuthorizationError)) throw error;
    if (error.redirectTo) return Response.redirect(error.redirectTo, 302);
    return page(400, message(`This authorization request is not valid: ${error.description}.`));
  }
}

async function formFields(raw: Request): Promise<Record<string, string> | null> {
  try {
    const data = await raw.formData();
    return Object.fromEntries([...data.entries()].filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  } catch {
    return null; // not a form
  }
}

/** No framing, no script, no outside resources; `no-store`, since the page carries a handle. */
const PAGE_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
  // Not no-referrer: under it a browser sends the form's POST with `Origin: null`, which the same-origin check refuses.
  "Referrer-Policy": "same-origin",
};

async function page(status: 200 | 400 | 403 | 413, body: Markup, extra?: Headers): Promise<Response> {
  const headers = new Headers(extra);
  for (const [name, value] of Object.entries(PAGE_HEADERS)) headers.set(name, value);
  return new Response(await shell(body), { status, headers });
}

type Markup = ReturnType<typeof html>;

/** The user id a grant is stored under: the library forbids `:` in it, and names never contain `/`. */
function grantUserId(owner: Owner): string {
  return `${owner.tenant}/${owner.user}`;
}

function shell(body: Markup) {
  return html`<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Context Runtime: connect an app</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem}input{width:100%;font:inherit;padding:.4rem}button{font:inherit;padding:.4rem 1rem}.error{color:#b00020}</style>
${body}</html>`;
}

function message(text: string) {
  return html`<h1>Context Runtime</h1><p>${text}</p>`;
}

function form(details: ConsentDescription, scope: string, handle: string, error?: string) {
  return html`<h1>Allow ${details.clientName} to use Context Runtime as you?</h1>
<p>${details.clientName} registered itself; its name is not verified. Access will be sent to <strong>${details.redirectHost}</strong>.</p>
${details.redirectIsLoopback ? html`<p><strong>That is an app on your computer.</strong> Continue only if you just started connecting from it.</p>` : ""}
<p>It asks for: <strong>${details.scope.length ? details.scope.join(" ") : "no scope"}</strong>. It will be granted <strong>${scope}</strong>: reading the contexts your agents see and calling their tools, over MCP.</p>
<form method="post">
<input type="hidden" name="handle" value="${handle}">
<p><label>Your frontend API key<br><input type="password" name="key" autocomplete="off" required></label></p>
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<p><button name="decision" value="allow">Allow</button> <button name="decision" value="deny" formnovalidate>Deny</button></p>
</form>`;
}
