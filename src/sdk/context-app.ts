import { z } from "zod";
import { ContextList, type ContextData } from "../core/context-data";
import {
  ErrorCode,
  isResponse,
  issuesOf,
  JsonRpcFrame,
  rpcError,
  rpcNotification,
  rpcRequest,
  rpcResult,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
} from "../protocol/jsonrpc";
import {
  AgentCreateResult,
  APP_SUBPROTOCOL,
  BEARER_SUBPROTOCOL_PREFIX,
  CloseCode,
  ContextsCurrentParams,
  ContextsCurrentResult,
  ContextsGetParams,
  ContextsGetResult,
  ContextsListParams,
  ContextsListResult,
  HEARTBEAT,
  InitializeParams,
  InitializeResult,
  PROTOCOL_VERSION,
  ResourcePushResult,
  ResourcesRemovedParams,
  type AgentDefinition,
  type ProviderDeclaration,
  type ProviderMethod,
  type ResourcePushParams,
  type ToolDeclaration,
} from "../protocol/methods";
import { Emitter } from "./emitter";
import { findWebSocket, OPEN, type SocketLike, type WebSocketCtor } from "./websocket";

/** Close codes the runtime uses for bad credentials and for a forbidden app: retrying cannot help. */
const FATAL_CLOSE_CODES: Record<number, ErrorCode> = { [CloseCode.Unauthorized]: ErrorCode.Unauthorized, [CloseCode.Forbidden]: ErrorCode.Forbidden };
const HEARTBEAT_TIMEOUT = { code: 4000, reason: "no frame received within two heartbeats" };
const CLOSED_BY_APP = { code: 1000, reason: "closed by the app" };

type Awaitable<T> = T | Promise<T>;

// ── Providers ───────────────────────────────────────────────────────────────

/** sanqian-style pages say whether more follow instead of giving a cursor. */
const HasMorePage = z.object({ items: ContextList.shape.items, hasMore: z.boolean() });

export type CurrentArgs = Omit<z.infer<typeof ContextsCurrentParams>, "provider">;
/** `offset` is the cursor read as a number, for providers that page by offset (0 when the cursor is not one). */
export type ListArgs = Omit<z.infer<typeof ContextsListParams>, "provider"> & { offset: number };
export type ProviderPage = ContextList | z.infer<typeof HasMorePage>;

/** One context an app provides: what the runtime lists in `initialize`, plus the functions that answer it. */
export interface ContextProvider extends Omit<z.input<typeof ProviderDeclaration>, "methods"> {
  getCurrent?: (args: CurrentArgs) => Awaitable<ContextData | null>;
  getList?: (args: ListArgs) => Awaitable<ProviderPage>;
  getById?: (id: string) => Awaitable<ContextData | null>;
}

type ProviderFunction = "getCurrent" | "getList" | "getById";
/** A provider declares exactly the methods it has functions for. */
const METHOD_OF: Record<ProviderFunction, ProviderMethod> = { getCurrent: "current", getList: "list", getById: "get" };

function declaration({ id, name, description, ...functions }: ContextProvider): z.input<typeof ProviderDeclaration> {
  const present = (Object.keys(METHOD_OF) as ProviderFunction[]).filter((fn) => typeof functions[fn] === "function");
  return { id, name, description, methods: present.map((fn) => METHOD_OF[fn]) };
}

/** An answer frame still waiting for the id of the request it answers. */
type Reply = (id: JsonRpcId) => string;
type Checked = z.ZodSafeParseResult<unknown>;
type ProvidersById = ReadonlyMap<string, ContextProvider>;

/** The runtime's requests to the app: validate params, find the provider, call it, check what it returned. */
const RUNTIME_REQUESTS: Record<string, (providers: ProvidersById, params: unknown) => Promise<Reply>> = {
  "contexts/current": (providers, raw) =>
    callProvider(providers, ContextsCurrentParams, raw, "getCurrent", async (provider, { conversationId }) =>
      ContextsCurrentResult.safeParse((await provider.getCurrent({ conversationId })) ?? null),
    ),
  "contexts/get": (providers, raw) =>
    callProvider(providers, ContextsGetParams, raw, "getById", async (provider, { id }) =>
      ContextsGetResult.safeParse((await provider.getById(id)) ?? null),
    ),
  "contexts/list": (providers, raw) =>
    callProvider(providers, ContextsListParams, raw, "getList", async (provider, { query, cursor, limit }) => {
      const offset = offsetOf(cursor);
      return toContextList(await provider.getList({ query, cursor, limit, offset }), offset);
    }),
};

function hasFunction<F extends ProviderFunction>(
  provider: ContextProvider,
  fn: F,
): provider is ContextProvider & Required<Pick<ContextProvider, F>> {
  return typeof provider[fn] === "function";
}

async function callProvider<S extends z.ZodType<{ provider: string }>, F extends ProviderFunction>(
  providers: ProvidersById,
  schema: S,
  raw: unknown,
  fn: F,
  call: (provider: ContextProvider & Required<Pick<ContextProvider, F>>, params: z.infer<S>) => Promise<Checked>,
): Promise<Reply> {
  const params = schema.safeParse(raw);
  if (!params.success) return failure(ErrorCode.InvalidParams, "invalid params", { issues: issuesOf(params.error) });
  const provider = providers.get(params.data.provider);
  if (!provider) return failure(ErrorCode.NotFound, `unknown provider '${params.data.provider}'`);
  if (!hasFunction(provider, fn)) return failure(ErrorCode.MethodNotFound, `provider '${provider.id}' has no ${fn}`);
  let checked: Checked;
  try {
    checked = await call(provider, params.data);
  } catch (error) {
    return failure(ErrorCode.InternalError, error instanceof Error ? error.message : String(error));
  }
  if (checked.success) return (id) => rpcResult(id, checked.data);
  const issues = issuesOf(checked.error);
  const detail = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  return failure(ErrorCode.InternalError, `provider returned invalid data: ${detail}`, { issues });
}

function failure(code: ErrorCode, message: string, data?: unknown): Reply {
  return (id) => rpcError(id, code, message, data);
}

function offsetOf(cursor: string | undefined): number {
  return cursor !== undefined && /^\d+$/.test(cursor) ? Number(cursor) : 0;
}

/** With `hasMore`, the next cursor is the offset after this page. */
function toContextList(page: unknown, offset: number): Checked {
  const hasMore = HasMorePage.safeParse(page);
  if (!hasMore.success) return ContextsListResult.safeParse(page);
  const { items } = hasMore.data;
  return ContextsListResult.safeParse(hasMore.data.hasMore ? { items, nextCursor: String(offset + items.length) } : { items });
}

// ── One socket's JSON-RPC traffic ────────────────────────────────────────────

export class ContextAppError extends Error {
  override readonly name = "ContextAppError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

interface LinkHandlers {
  onOpen(): void;
  onRequest(request: JsonRpcRequest): void;
  onNotification(notification: JsonRpcNotification): void;
  onError(error: Error): void;
  /** Called exactly once, whether the peer closed, the heartbeat lapsed, or `drop` was called. */
  onClose(code: number, reason: string): void;
}

interface PendingRequest {
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/** A socket's lifetime: request ids and their answers, heartbeat and liveness. */
class RpcLink {
  private nextId = 1;
  private readonly pending = new Map<JsonRpcId, PendingRequest>();
  private lastReceivedAt = Date.now();
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private liveness: ReturnType<typeof setTimeout> | undefined;
  private opened = false;
  private ended = false;
  private markClosed!: () => void;
  /** Settles when the socket has really closed (after `end`, which may come first when we drop it). */
  private readonly socketClosed = new Promise<void>((resolve) => (this.markClosed = resolve));

  constructor(
    private readonly socket: SocketLike,
    private readonly heartbeatMs: number,
    private readonly handlers: LinkHandlers,
  ) {
    // After `end`, events are ignored: a dropped socket's late frames and errors no longer matter.
    socket.addEventListener("open", () => {
      if (this.ended) return;
      this.opened = true;
      this.lastReceivedAt = Date.now();
      this.heartbeat = setInterval(() => this.send(HEARTBEAT.ping), heartbeatMs);
      this.liveness = setTimeout(this.checkLiveness, 2 * heartbeatMs);
      handlers.onOpen();
    });
    socket.addEventListener("message", (event: { data: unknown }) => {
      if (!this.ended) this.receive(event.data);
    });
    socket.addEventListener("error", (event: { message?: unknown }) => {
      if (this.ended) return;
      const message = typeof event.message === "string" && event.message ? event.message : "WebSocket error";
      handlers.onError(new Error(message));
      // A failed handshake may fire no `close` (Node's undici WebSocket, nodejs/undici#3546): it is over all the same.
      if (!this.opened) {
        this.markClosed();
        this.end(1006, message);
      }
    });
    socket.addEventListener("close", (event: { code: number; reason: string }) => {
      this.markClosed();
      this.end(event.code, event.reason);
    });
  }

  request(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    if (this.ended || this.socket.readyState !== OPEN) return Promise.reject(new Error("the connection is closed"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`'${method}' got no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.socket.send(rpcRequest(id, method, params));
    });
  }

  send(frame: string): void {
    if (!this.ended && this.socket.readyState === OPEN) this.socket.send(frame);
  }

  /** Close from this side and report it at once, without waiting for the peer's close frame (it may be gone). */
  drop(code: number, reason: string): Promise<void> {
    // An unopened socket has no handshake to wait for (and some implementations never report its close).
    if (!this.opened) this.markClosed();
    this.socket.close(code, reason);
    this.end(code, reason);
    return this.socketClosed;
  }

  private readonly checkLiveness = () => {
    const silentFor = Date.now() - this.lastReceivedAt;
    if (silentFor >= 2 * this.heartbeatMs) void this.drop(HEARTBEAT_TIMEOUT.code, HEARTBEAT_TIMEOUT.reason);
    else this.liveness = setTimeout(this.checkLiveness, 2 * this.heartbeatMs - silentFor);
  };

  private receive(data: unknown): void {
    // Every frame, `pong` included, proves the runtime is still there.
    this.lastReceivedAt = Date.now();
    if (typeof data !== "string" || data === HEARTBEAT.pong) return;
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      return;
    }
    const parsed = JsonRpcFrame.safeParse(json);
    if (!parsed.success) return;
    const frame = parsed.data;
    if (isResponse(frame)) {
      const pending = frame.id === null ? undefined : this.pending.get(frame.id);
      if (!pending || frame.id === null) return;
      this.pending.delete(frame.id);
      clearTimeout(pending.timer);
      if ("error" in frame) pending.reject(new ContextAppError(frame.error.code, frame.error.message, frame.error.data));
      else pending.resolve(frame.result ?? null);
    } else if (frame.id !== undefined) {
      this.handlers.onRequest(frame);
    } else {
      this.handlers.onNotification(frame);
    }
  }

  private end(code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.liveness);
    for (const pending of this.pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(new Error(`the connection closed (${code}) before an answer came`));
    }
    this.pending.clear();
    this.handlers.onClose(code, reason);
  }
}

// ── The app ───────────────────────────────────────────────────────────────────

export interface ContextAppOptions {
  /** The runtime's base URL (http(s) or ws(s)); the app connects to `${url}/v1/apps/connect`. */
  url: string;
  token: string;
  app: InitializeParams["app"];
  contexts?: ContextProvider[];
  tools?: z.input<typeof ToolDeclaration>[];
  /** Defaults to `globalThis.WebSocket`, else the `ws` package. */
  WebSocket?: WebSocketCtor;
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  heartbeatMs?: number;
  requestTimeoutMs?: number;
}

export interface ContextAppEvents {
  connected: { url: string };
  registered: InitializeResult;
  disconnected: { code: number; reason: string };
  resourceRemoved: ResourcesRemovedParams;
  error: Error;
}

interface RegistrationWaiter {
  resolve(link: RpcLink): void;
  reject(error: Error): void;
}

/**
 * An app's connection to the runtime: registers its providers and agents, answers
 * the runtime's context requests, and stays connected (heartbeat, reconnect with
 * backoff, re-registration) until `close()`.
 */
export class ContextApp {
  private readonly events = new Emitter<ContextAppEvents>();
  private readonly url: string;
  private readonly initialize: z.output<typeof InitializeParams>;
  private readonly providers: ProvidersById;
  /** Every agent created so far, sent in `initialize` after each reconnect; the same id replaces. */
  private readonly agents = new Map<string, AgentDefinition>();
  private readonly waiters = new Set<RegistrationWaiter>();
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly heartbeatMs: number;
  private readonly requestTimeoutMs: number;

  private link: RpcLink | null = null;
  /** The current socket opened: its close is a `disconnected`, not just a failed attempt. */
  private connected = false;
  private registered = false;
  private started = false;
  /** Set by `close()` or a fatal error: no more connections. */
  private stopped: Error | null = null;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly options: ContextAppOptions) {
    this.url = `${options.url.replace(/\/+$/, "").replace(/^http(s?):/i, "ws$1:")}/v1/apps/connect`;
    const contexts = options.contexts ?? [];
    // Parsed here so a malformed declaration fails at construction, not on every reconnect.
    this.initialize = InitializeParams.parse({
      protocolVersion: PROTOCOL_VERSION,
      app: options.app,
      contexts: contexts.map(declaration),
      tools: options.tools ?? [],
    });
    this.providers = new Map(contexts.map((p) => [p.id, p]));
    this.initialDelayMs = options.reconnect?.initialDelayMs ?? 250;
    this.maxDelayMs = options.reconnect?.maxDelayMs ?? 30_000;
    this.heartbeatMs = options.heartbeatMs ?? 30_000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  }

  on<K extends keyof ContextAppEvents>(event: K, handler: (payload: ContextAppEvents[K]) => void): () => void {
    return this.events.on(event, handler);
  }

  /** Resolves once registered (initialize answered, agents re-sent); rejects on bad credentials or `close()`. */
  async connect(): Promise<void> {
    if (this.stopped) throw this.stopped;
    if (this.registered) return;
    const registration = this.nextRegistration();
    if (!this.started) {
      this.started = true;
      void this.open();
    }
    await registration;
  }

  async createAgent(agent: AgentDefinition): Promise<z.infer<typeof AgentCreateResult>> {
    const created = await this.call("agents/create", agent, AgentCreateResult);
    this.agents.set(agent.agentId, agent);
    return created;
  }

  pushResource(resource: ResourcePushParams): Promise<ResourcePushResult> {
    return this.call("resources/push", resource, ResourcePushResult);
  }

  async removeResource(fullId: string, conversationId?: string): Promise<void> {
    await this.call("resources/remove", conversationId === undefined ? { fullId } : { fullId, conversationId }, z.unknown());
  }

  /** A hint that a provider's current state changed; dropped while disconnected (the runtime pulls before each turn anyway). */
  notifyChanged(provider: string): void {
    if (!this.providers.has(provider)) throw new Error(`unknown provider '${provider}'`);
    if (this.registered) this.link?.send(rpcNotification("contexts/changed", { provider }));
  }

  /** Stops reconnecting, rejects what still waits, and closes the socket. */
  async close(): Promise<void> {
    this.stop(new Error("the app was closed"));
    const link = this.link;
    if (!link) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Wait for the close handshake, but not for a runtime that no longer answers.
    await Promise.race([
      link.drop(CLOSED_BY_APP.code, CLOSED_BY_APP.reason),
      new Promise((resolve) => (timer = setTimeout(resolve, this.requestTimeoutMs))),
    ]);
    clearTimeout(timer);
  }

  // ── Lifecycle ───────────────────────────────────────────────────────────────

  private async open(): Promise<void> {
    let socket: SocketLike;
    try {
      const WebSocket = await findWebSocket(this.options.WebSocket);
      if (this.stopped) return;
      // The token rides as a subprotocol: the one way a browser can send a credential with the upgrade.
      socket = new WebSocket(this.url, [APP_SUBPROTOCOL, `${BEARER_SUBPROTOCOL_PREFIX}${this.options.token}`]);
    } catch (error) {
      // A missing implementation, a malformed URL or token: retrying cannot help.
      return this.fail(error instanceof Error ? error : new Error(String(error)));
    }
    const link: RpcLink = new RpcLink(socket, this.heartbeatMs, {
      onOpen: () => {
        this.connected = true;
        this.events.emit("connected", { url: this.url });
        void this.register(link);
      },
      onRequest: (request) => void this.answer(link, request),
      onNotification: (notification) => this.notified(notification),
      onError: (error) => this.events.emit("error", error),
      onClose: (code, reason) => this.closed(link, code, reason),
    });
    this.link = link;
  }

  private async register(link: RpcLink): Promise<void> {
    let registered: InitializeResult;
    try {
      // Agents ride in `initialize`: the runtime replaces providers and agents in one step, with no gap between.
      const params = { ...this.initialize, agents: [...this.agents.values()] };
      registered = InitializeResult.parse(await link.request("initialize", params, this.requestTimeoutMs));
    } catch (error) {
      if (link !== this.link) return; // the socket closed meanwhile; `closed` takes it from here
      const fatal = error instanceof ContextAppError && (error.code === ErrorCode.Unauthorized || error.code === ErrorCode.Forbidden);
      if (fatal) this.fail(error);
      else this.events.emit("error", error instanceof Error ? error : new Error(String(error)));
      void link.drop(CLOSED_BY_APP.code, "initialize failed");
      return;
    }
    if (link !== this.link) return;
    this.registered = true;
    this.attempt = 0;
    for (const waiter of this.waiters) waiter.resolve(link);
    this.waiters.clear();
    this.events.emit("registered", registered);
  }

  private closed(link: RpcLink, code: number, reason: string): void {
    if (link !== this.link) return;
    this.link = null;
    this.registered = false;
    if (this.connected) this.events.emit("disconnected", { code, reason });
    this.connected = false;
    const fatal = FATAL_CLOSE_CODES[code];
    if (fatal !== undefined) return this.fail(new ContextAppError(fatal, reason || `the runtime closed the connection (${code})`));
    if (this.stopped) return;
    const ceiling = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** this.attempt++);
    // Full jitter: many apps cut off together do not return together.
    this.retryTimer = setTimeout(() => void this.open(), Math.random() * ceiling);
  }

  /** No more connections: rejects `connect()` and every request still waiting for one. */
  private fail(error: Error): void {
    if (this.stopped) return;
    this.stop(error);
    this.events.emit("error", error);
  }

  private stop(error: Error): void {
    this.stopped ??= error;
    clearTimeout(this.retryTimer);
    for (const waiter of this.waiters) waiter.reject(this.stopped);
    this.waiters.clear();
  }

  // ── Traffic ─────────────────────────────────────────────────────────────────

  /** Sends once registered (waiting for the next registration if need be), all within `requestTimeoutMs`. */
  private async call<S extends z.ZodType>(method: string, params: unknown, result: S): Promise<z.infer<S>> {
    const deadline = Date.now() + this.requestTimeoutMs;
    const link = this.registered && this.link ? this.link : await this.nextRegistration(this.requestTimeoutMs);
    const answer = result.safeParse(await link.request(method, params, Math.max(1, deadline - Date.now())));
    if (!answer.success) {
      throw new ContextAppError(ErrorCode.InternalError, `the runtime answered '${method}' with invalid data`, { issues: issuesOf(answer.error) });
    }
    return answer.data;
  }

  private nextRegistration(timeoutMs?: number): Promise<RpcLink> {
    if (this.stopped) return Promise.reject(this.stopped);
    return new Promise((resolve, reject) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => settle.reject(new Error(`not registered within ${timeoutMs} ms`)), timeoutMs);
      const settle: RegistrationWaiter = {
        resolve: (link) => {
          clearTimeout(timer);
          resolve(link);
        },
        reject: (error) => {
          clearTimeout(timer);
          this.waiters.delete(settle);
          reject(error);
        },
      };
      this.waiters.add(settle);
    });
  }

  private async answer(link: RpcLink, request: JsonRpcRequest): Promise<void> {
    const handle = RUNTIME_REQUESTS[request.method];
    const reply = handle ? await handle(this.providers, request.params) : failure(ErrorCode.MethodNotFound, `unknown method '${request.method}'`);
    link.send(reply(request.id));
  }

  private notified(notification: JsonRpcNotification): void {
    if (notification.method !== "resources/removed") return;
    const params = ResourcesRemovedParams.safeParse(notification.params);
    if (params.success) this.events.emit("resourceRemoved", params.data);
  }
}
