/**
 * MCP servers the runtime consumes as apps (docs/mcp.md, "Consume"): how one is declared (an app's `initialize`, or
 * `POST /v1/mcp-servers`), how it is listed back (header names only: their values may be secrets), and the refs that
 * name its resources.
 */
import * as z from "zod";
import { LIMITS } from "./limits";
import { Name, QualifiedName } from "./names";

export const MCP_CONSUME_LIMITS = {
  /** Servers one user registers through the HTTP API, and one app declares in `initialize`. */
  serversPerUser: 16,
  serversPerApp: 8,
  urlChars: 2_048,
  headersPerServer: 16,
  headerValueChars: 4_096,
  /** Tools and prompts taken from one server's lists (the rest are left out, and counted). */
  toolsPerServer: LIMITS.toolsPerAgent,
  promptsPerServer: LIMITS.skillsPerApp,
  /** A pinned resource's URI in `attachedContexts` (`server:uri`). */
  resourceUriChars: 1_024,
  /** How long connecting (initialize and the first lists) may take when a user registers a server. */
  registerDeadlineMs: 5_000,
  /** Reconnect backoff: the first wait, doubled each failure up to the last. */
  backoffFirstMs: 1_000,
  backoffMaxMs: 300_000,
} as const;

/** Headers the transport sets itself, or that would change what the request is: never taken from a declaration. */
const RESERVED_HEADERS = new Set([
  "accept",
  "connection",
  "content-length",
  "content-type",
  "host",
  "last-event-id",
  "mcp-protocol-version",
  "mcp-session-id",
  "transfer-encoding",
  "upgrade",
]);

const HeaderName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)")
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), "the transport sets this header itself");

/** A header's value: one line of visible characters (no CR or LF, which would split the request). */
const HeaderValue = z
  .string()
  .max(MCP_CONSUME_LIMITS.headerValueChars)
  .regex(/^[\t\x20-\x7e\x80-\uffff]*$/, "one line of text, without control characters");

/** Streamable HTTP only: an http(s) URL without credentials in it (they go in `headers`, which are never shown). */
export const McpServerUrl = z
  .string()
  .max(MCP_CONSUME_LIMITS.urlChars)
  .superRefine((text, ctx) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      ctx.addIssue({ code: "custom", message: "not a URL" });
      return;
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") ctx.addIssue({ code: "custom", message: `only http(s) URLs (Streamable HTTP); not '${url.protocol}'` });
    if (url.username || url.password) ctx.addIssue({ code: "custom", message: "no credentials in the URL: send them in headers, which are never shown back" });
    if (url.hash) ctx.addIssue({ code: "custom", message: "no fragment ('#…') in the URL" });
  });

export const McpServerDeclaration = z
  .object({
    /** The server's name in the catalog: its tools are `name:tool`, its resources `name:resources`, its prompts `name:prompt`. */
    name: Name,
    url: McpServerUrl,
    /** Sent with every request (an API key, a bearer token); stored with the user's hub and never returned or logged. */
    headers: z
      .record(HeaderName, HeaderValue)
      .refine((h) => Object.keys(h).length <= MCP_CONSUME_LIMITS.headersPerServer, `at most ${MCP_CONSUME_LIMITS.headersPerServer} headers`)
      .optional(),
  })
  .strict();
export type McpServerDeclaration = z.input<typeof McpServerDeclaration>;

/** `initialize.mcpServers`: each name once. */
export const McpServerDeclarations = z
  .array(McpServerDeclaration)
  .max(MCP_CONSUME_LIMITS.serversPerApp)
  .superRefine((servers, ctx) =>
    servers.forEach(({ name }, i) => {
      if (servers.findIndex((other) => other.name === name) < i) ctx.addIssue({ code: "custom", path: [i, "name"], message: `MCP server '${name}' is declared twice` });
    }),
  );

/** A registered server as listed back: never its headers' values. */
export const McpServerInfo = z.object({
  name: z.string(),
  url: z.string(),
  headerNames: z.array(z.string()),
  /** `user` (the HTTP API), or the app that declared it in `initialize`. */
  declaredBy: z.string(),
  /** `online`: a session is open; `connecting`; `offline`: the last attempt failed (`detail` says why) and the next waits out its backoff; `idle`: none tried since the hub woke (the first use connects). */
  status: z.enum(["online", "offline", "connecting", "idle"]),
  detail: z.string().optional(),
  tools: z.number(),
  prompts: z.number(),
  /** Whether the server offers resources (then `name:resources` is a provider). */
  resources: z.boolean(),
  /** Tools and prompts left out of the catalog (an unusable name or schema, past the limits), with why. */
  skipped: z.array(z.object({ kind: z.enum(["tool", "prompt"]), name: z.string(), reason: z.string() })),
  createdAt: z.string(),
});
export type McpServerInfo = z.infer<typeof McpServerInfo>;
export const McpServerList = z.object({ servers: z.array(McpServerInfo) });

/** The provider each server's resources become: `name:resources` (list is `resources/list`, get is `resources/read`). */
export const MCP_RESOURCES_PROVIDER = "resources";

/**
 * A pinned resource: `server:uri`, e.g. `docs:file:///guide.md`. In an agent's `attachedContexts` it is that one
 * resource's current contents each turn. A URI always has a scheme, so it never reads as a provider's name.
 */
export const PinnedResourceRef = z
  .string()
  .max(LIMITS.nameChars + 1 + MCP_CONSUME_LIMITS.resourceUriChars)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*:[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$/, "expected 'server:uri', e.g. 'docs:file:///guide.md'");

/** What `attachedContexts` holds: a provider (`app:provider`) or an MCP server's pinned resource (`server:uri`). */
export const AttachedContextRef = z.union([QualifiedName, PinnedResourceRef]);

/** The URI of a pinned resource ref (`server:uri`), or null when the ref names a provider. */
export function pinnedUri(ref: string): string | null {
  const colon = ref.indexOf(":");
  const rest = ref.slice(colon + 1);
  return colon > 0 && rest.includes(":") ? rest : null;
}
