/**
 * The MCP sessions a conversation serves (docs/mcp.md, "Serve"): Streamable HTTP, one request at a time, each answered
 * by the official SDK's server and its web-standard transport. The SDK keeps a session in the memory of the transport
 * that opened it, which a Durable Object loses when it is evicted; so each request gets a fresh server and a stateless
 * transport, and the session itself (its id, agent, client, version and subscriptions) lives in SQLite. A GET opens the
 * session's stream: its server is kept while the stream is open, and notifications (resources updated, tools changed)
 * go out on it.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport, type EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { InitializeRequestSchema, JSONRPCMessageSchema, JSONRPCNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { contextKey } from "../core/attachments";
import type { Result } from "../core/problem";
import { LIMITS } from "../protocol/limits";
import { MCP_RESOURCES_PROVIDER } from "../protocol/mcp-servers";
import { agentServer } from "../mcp/serve/server";
import { parseContextUri, type ContextAddress } from "../mcp/serve/uris";
import { MCP_PROTOCOL_VERSIONS, mcpError, sessionConversation, type McpTarget } from "../mcp/serve/wire";
import type { McpSession } from "./mcp-session-store";
import { agentView, versionNow } from "./mcp-view";
import type { ConversationScope } from "./scope";

/** A session's open stream: the server whose transport holds it. */
interface OpenStream {
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
}

/** A session unused this long ends (the Conversation object's alarm): its subscriptions stop being watched. */
export const MCP_SESSION_IDLE_MS = 24 * 60 * 60 * 1000;

export class McpSessions {
  private readonly streams = new Map<string, OpenStream>();

  /** `wakeAt`: sets the object's alarm, at which `expire` runs. */
  constructor(private readonly wakeAt: (at: Date) => Promise<void>) {}

  /**
   * One request of a session. `scopeOf(true)` makes the conversation, and is asked only for a valid `initialize`: a
   * request that opens no session leaves nothing behind.
   */
  async handle(request: Request, target: McpTarget, scopeOf: (create: boolean) => Promise<Result<ConversationScope>>): Promise<Response> {
    let body: unknown;
    if (request.method === "POST") {
      try {
        body = await request.json();
      } catch {
        return mcpError(400, "Parse error: the body is not JSON", -32700);
      }
      const messages: unknown[] = Array.isArray(body) ? body : [body];
      const initialize = messages.find((m) => typeof m === "object" && m !== null && (m as { method?: unknown }).method === "initialize");
      if (initialize !== undefined) return this.initialize(request, target, scopeOf, messages, initialize);
    }
    // Everything else belongs to an open session of this conversation and agent.
    if (target.sessionId === null) return mcpError(400, "Bad Request: Mcp-Session-Id header is required");
    const scope = await scopeOf(false);
    const session = scope.ok ? sessionOf(scope.value, target) : null;
    if (!scope.ok || !session) return sessionNotFound();
    if (request.method === "DELETE") return this.end(scope.value, session);
    scope.value.db.mcp.seen(session.sessionId, scope.value.now().toISOString());
    return request.method === "POST" ? this.exchange(scope.value, session, request, body) : this.stream(scope.value, session, request);
  }

  /** An `initialize`: alone, well formed and sessionless, it opens a session (and makes the conversation when asked). */
  private async initialize(request: Request, target: McpTarget, scopeOf: (create: boolean) => Promise<Result<ConversationScope>>, messages: unknown[], initialize: unknown): Promise<Response> {
    if (target.sessionId !== null) return mcpError(400, "Bad Request: initialize opens a session; send it without Mcp-Session-Id");
    if (messages.length > 1) return mcpError(400, "Invalid Request: initialize must be sent alone", -32600);
    const parsed = InitializeRequestSchema.safeParse(initialize);
    if (!parsed.success) return mcpError(400, "Invalid Request: initialize does not match the MCP schema", -32600);
    const scope = await scopeOf(target.create);
    if (!scope.ok) return mcpError(scope.problem.type === "not-found" ? 404 : 409, scope.problem.detail);
    return this.open(scope.value, target, parsed.data.params, request, initialize);
  }

  /** A new session: its row first, then the SDK answers the initialize (negotiating the version), with the session's id. */
  private async open(scope: ConversationScope, target: McpTarget, params: { protocolVersion: string; clientInfo: { name: string; version: string } }, request: Request, initialize: unknown): Promise<Response> {
    const { db, meta } = scope;
    // Older clients are answered with the latest version, which they may refuse: the oldest served is 2025-06-18.
    const protocolVersion = MCP_PROTOCOL_VERSIONS.includes(params.protocolVersion) ? params.protocolVersion : MCP_PROTOCOL_VERSIONS[0]!;
    const negotiated = { ...(initialize as object), params: { ...params, protocolVersion } };
    const sessions = db.mcp.list();
    for (const oldest of sessions.slice(0, Math.max(0, sessions.length + 1 - LIMITS.mcpSessionsPerConversation))) await this.forget(scope, oldest, "replaced");
    const session: McpSession = {
      sessionId: `${meta.conversationId}.${crypto.randomUUID().replaceAll("-", "")}`,
      agent: target.agent,
      protocolVersion,
      client: { name: params.clientInfo.name, version: params.clientInfo.version },
      createdAt: scope.now().toISOString(),
    };
    db.mcp.add(session);
    db.events.add(`mcp:${session.sessionId}`, "mcp.session.started", target.agent, { client: session.client, protocolVersion }, session.createdAt);
    await this.scheduleExpiry(scope);
    const answered = await this.exchange(scope, session, request, negotiated);
    const headers = new Headers(answered.headers);
    headers.set("Mcp-Session-Id", session.sessionId);
    return new Response(answered.body, { status: answered.status, headers });
  }

  /** A POST of an open session: answered as JSON once every request in it is answered. */
  private async exchange(scope: ConversationScope, session: McpSession, request: Request, body: unknown): Promise<Response> {
    const server = await this.server(scope, session);
    if (!server) return agentGone(session);
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody: body });
    } finally {
      await server.close();
    }
  }

  /** The session's stream (GET): a newer one replaces the older, whose connection may already be dead. */
  private async stream(scope: ConversationScope, session: McpSession, request: Request): Promise<Response> {
    const server = await this.server(scope, session);
    if (!server) return agentGone(session);
    const transport = new WebStandardStreamableHTTPServerTransport({ eventStore: streamEvents(scope, session.sessionId) });
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    if (!response.ok) {
      await server.close();
      return response;
    }
    await this.closeStream(session.sessionId);
    const open = { server, transport };
    this.streams.set(session.sessionId, open);
    // What was kept while no stream was open goes out first: a resumed stream (Last-Event-ID) has had it replayed.
    const held = scope.db.mcpEvents.takeHeld(session.sessionId);
    if (!request.headers.has("last-event-id")) for (const event of held) await server.notification(JSONRPCNotificationSchema.parse(JSON.parse(event.message)));
    // The stream is forgotten once it ends; what is told after that waits in the event store (see `changed`).
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    void response
      .body!.pipeTo(writable)
      .catch(() => undefined)
      .finally(() => {
        if (this.streams.get(session.sessionId) === open) void this.closeStream(session.sessionId);
      });
    return new Response(readable, { status: response.status, headers: response.headers });
  }

  private async server(scope: ConversationScope, session: McpSession): Promise<Server | null> {
    const toolbox = await scope.apps.toolbox(session.agent);
    if (!toolbox) return null;
    const view = agentView(scope, session, toolbox, { toolsChanged: () => void this.streams.get(session.sessionId)?.server.sendToolListChanged().catch(() => this.closeStream(session.sessionId)) });
    const { agent } = toolbox;
    return agentServer(view, `${agent.name}${agent.description ? `: ${agent.description}` : ""}. Its contexts are resources (ctx://app/provider), its skills prompts.`);
  }

  private async end(scope: ConversationScope, session: McpSession): Promise<Response> {
    await this.forget(scope, session, "client");
    return new Response(null, { status: 200 });
  }

  /** A session ends: its row, its subscriptions (the hub stops telling this conversation of refs no one else watches), its stream. */
  private async forget(scope: ConversationScope, session: McpSession, by: "client" | "replaced" | "conversation" | "idle"): Promise<void> {
    const { db, meta, apps } = scope;
    for (const ref of db.mcp.remove(session.sessionId)) await apps.watchContext(meta.conversationId, ref, false);
    db.events.add(`mcp:${session.sessionId}`, "mcp.session.ended", session.agent, { by }, scope.now().toISOString());
    await this.closeStream(session.sessionId);
  }

  /** The alarm: sessions idle past MCP_SESSION_IDLE_MS end, and the alarm is set for the next that could. */
  async expire(scope: ConversationScope): Promise<void> {
    const before = new Date(scope.now().getTime() - MCP_SESSION_IDLE_MS).toISOString();
    for (const session of scope.db.mcp.idleSince(before)) await this.forget(scope, session, "idle");
    await this.scheduleExpiry(scope);
  }

  private async scheduleExpiry(scope: ConversationScope): Promise<void> {
    const oldest = scope.db.mcp.oldestSeen();
    if (oldest !== null) await this.wakeAt(new Date(Date.parse(oldest) + MCP_SESSION_IDLE_MS));
  }

  /** The conversation ended: every session with it. */
  async endAll(scope: ConversationScope): Promise<void> {
    for (const session of scope.db.mcp.list()) await this.forget(scope, session, "conversation");
  }

  private async closeStream(sessionId: string): Promise<void> {
    const open = this.streams.get(sessionId);
    if (!open) return;
    this.streams.delete(sessionId);
    await open.server.close().catch(() => undefined);
  }

  /** A turn pulled contexts: the subscribed ones it pulled are announced if their version moved (no provider is asked again). */
  async pulled(scope: ConversationScope): Promise<void> {
    const refs = scope.db.mcp.watchedRefs();
    if (refs.length === 0) return;
    const known = new Map([...scope.cache.contexts].map(([key, context]) => [key, context.version]));
    for (const ref of refs) await this.changed(scope, ref, known);
  }

  /**
   * Contexts of `ref` may have changed (the app said so, or a turn pulled them): each subscribed resource is read
   * again (or taken from `known`, by context key, as a turn pulled it), and a version other than the one its session
   * was last told of is announced on the session's stream. Every announcement is kept in the stream's event store
   * first: a client whose stream dropped (or was not open) gets it when it reconnects with Last-Event-ID.
   */
  async changed(scope: ConversationScope, ref: string, known?: ReadonlyMap<string, string>): Promise<void> {
    const subscriptions = scope.db.mcp.watchers(ref);
    if (subscriptions.length === 0) return;
    const versions = new Map<string, string | null>();
    for (const s of subscriptions) {
      if (!versions.has(s.uri)) versions.set(s.uri, await currentVersion(scope, s.uri, known));
      const version = versions.get(s.uri)!;
      if (version === null || version === s.version) continue;
      const open = this.streams.get(s.sessionId);
      const sent = open ? await open.server.sendResourceUpdated({ uri: s.uri }).then(() => true, () => false) : false;
      if (!sent) {
        await this.closeStream(s.sessionId);
        const notification = { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: s.uri } };
        scope.db.mcpEvents.add(s.sessionId, STANDALONE_STREAM, JSON.stringify(notification), LIMITS.mcpStreamEventsPerSession, true);
      }
      scope.db.mcp.announced(s.sessionId, s.uri, version);
      scope.db.events.add(`mcp:${s.sessionId}`, "mcp.resource.updated", s.uri, { ref, version, on: sent ? "stream" : "stored" }, scope.now().toISOString());
    }
  }
}

/** The SDK's name for a session's GET stream (its only stream here: POSTs are answered with JSON); a replay names it. */
const STANDALONE_STREAM = "_GET_stream";

/** The SDK's event store over the conversation's SQLite, for one session: event ids are sequence numbers. */
function streamEvents(scope: ConversationScope, sessionId: string): EventStore {
  const events = scope.db.mcpEvents;
  // An id up to the last this session was given names its stream, even once no longer kept: the replay then starts at
  // the oldest event kept. Any other id (a later number, not a number) is refused, as the SDK does, with 400.
  const seqOf = (eventId: string) => {
    const seq = /^\d{1,15}$/.test(eventId) ? Number(eventId) : null;
    return seq !== null && seq <= events.last(sessionId) ? seq : null;
  };
  return {
    storeEvent: async (streamId, message) => String(events.add(sessionId, streamId, JSON.stringify(message), LIMITS.mcpStreamEventsPerSession)),
    getStreamIdForEventId: async (eventId) => (seqOf(eventId) === null ? undefined : STANDALONE_STREAM),
    replayEventsAfter: async (eventId, { send }) => {
      for (const event of events.after(sessionId, STANDALONE_STREAM, seqOf(eventId) ?? events.last(sessionId))) await send(String(event.seq), JSONRPCMessageSchema.parse(JSON.parse(event.message)));
      return STANDALONE_STREAM;
    },
  };
}

/** The version of a subscribed resource now: as a turn pulled it when `known` is given (null if it did not), else read again. */
async function currentVersion(scope: ConversationScope, uri: string, known?: ReadonlyMap<string, string>): Promise<string | null> {
  const address = parseContextUri(uri);
  if (!address) return null;
  return known ? pulledVersion(known, address) : versionNow(scope, address);
}

/** The version a turn pulled `address` at, keyed as the turn keys it: an MCP server's pinned resource as `server:uri`. */
function pulledVersion(known: ReadonlyMap<string, string>, address: ContextAddress): string | null {
  const own = known.get(contextKey(address.ref, address.itemId));
  if (own !== undefined || address.itemId === undefined || !address.ref.endsWith(`:${MCP_RESOURCES_PROVIDER}`)) return own ?? null;
  return known.get(`${address.ref.slice(0, address.ref.indexOf(":"))}:${address.itemId}`) ?? null;
}

/** The session a request names, if it is this conversation's and was opened for the agent the path names. */
function sessionOf(scope: ConversationScope, target: McpTarget): McpSession | null {
  if (target.sessionId === null || sessionConversation(target.sessionId) !== scope.meta.conversationId) return null;
  const session = scope.db.mcp.get(target.sessionId);
  return session?.agent === target.agent ? session : null;
}

function sessionNotFound(): Response {
  return mcpError(404, "Session not found: initialize a new session", -32001);
}

function agentGone(session: McpSession): Response {
  return mcpError(404, `agent '${session.agent}' is no longer registered; initialize a new session`, -32001);
}
