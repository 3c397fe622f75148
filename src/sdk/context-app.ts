import * as z from "zod";
import { ErrorCode, issuesOf, type JsonRpcNotification, type JsonRpcRequest } from "../protocol/jsonrpc";
import {
  AgentCreateResult,
  APP_SUBPROTOCOL,
  BEARER_SUBPROTOCOL_PREFIX,
  CloseCode,
  InitializeParams,
  InitializeResult,
  PROTOCOL_VERSION,
  ResourcePushResult,
  ResourcesRemovedParams,
  type AgentDefinition,
  type ResourcePushParams,
  type MountDeclaration,
  type SkillDeclaration,
} from "../protocol/methods";
import type { McpServerDeclaration } from "../protocol/mcp-servers";
import { Emitter } from "./emitter";
import { hookDeclaration, hooksByName, runHookNotification, type AppHook } from "./hook-requests";
import { declaration, failure, RUNTIME_REQUESTS, toolDeclaration, type AppHandlers, type AppTool, type ContextProvider } from "./provider-requests";
import { ContextAppError, RpcLink } from "./rpc-link";
import { findWebSocket, type SocketLike, type WebSocketCtor } from "./websocket";

/** Close codes the runtime uses for bad credentials and for a forbidden app: retrying cannot help. */
const FATAL_CLOSE_CODES: Record<number, ErrorCode> = { [CloseCode.Unauthorized]: ErrorCode.Unauthorized, [CloseCode.Forbidden]: ErrorCode.Forbidden };
const CLOSED_BY_APP = { code: 1000, reason: "closed by the app" };

export interface ContextAppOptions {
  /** The runtime's base URL (http(s) or ws(s)); the app connects to `${url}/v1/apps/connect`. */
  url: string;
  token: string;
  app: InitializeParams["app"];
  contexts?: ContextProvider[];
  /** Tools the app serves: the runtime validates a model's arguments against `inputSchema`, then calls `handler`. */
  tools?: AppTool[];
  /** Skills (manuals the model reads on demand); all of them must fit in the `initialize` frame with the rest. */
  skills?: SkillDeclaration[];
  /**
   * Logic at named points of the turn (docs/hooks.md): each declaration is sent in `initialize` (at every reconnect),
   * and the runtime's `hooks/call` for it runs `handler`, whose payload and decision follow the hook's `point`.
   */
  hooks?: AppHook[];
  /** Folders the app mounts for agents: the model is told of them and what it may do in each (docs/reminders.md). */
  mounts?: MountDeclaration[];
  /**
   * MCP servers the app brings (docs/mcp.md, "Consume"): the runtime opens a session to each and serves its tools,
   * prompts and resources as `name:…`, as long as the app declares it. Headers (an API key) go only to the server.
   */
  mcpServers?: McpServerDeclaration[];
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
 * An app's connection to the runtime: registers its providers, tools, skills, hooks and agents,
 * answers the runtime's context requests, tool calls and hook calls, and stays connected (heartbeat, reconnect with
 * backoff, re-registration) until `close()`.
 */
export class ContextApp {
  private readonly events = new Emitter<ContextAppEvents>();
  private readonly url: string;
  private readonly initialize: z.output<typeof InitializeParams>;
  private readonly handlers: AppHandlers;
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
      tools: (options.tools ?? []).map(toolDeclaration),
      skills: options.skills ?? [],
      hooks: (options.hooks ?? []).map(hookDeclaration),
      mounts: options.mounts ?? [],
      mcpServers: options.mcpServers ?? [],
      capabilities: { currentMany: true },
    });
    const tools = options.tools ?? [];
    const unhandled = tools.find((t) => typeof t.handler !== "function");
    if (unhandled) throw new Error(`tool '${unhandled.name}' has no handler`);
    this.handlers = {
      providers: new Map(contexts.map((p) => [p.id, p])),
      tools: new Map(tools.map((t) => [t.name, t])),
      hooks: hooksByName(options.hooks ?? []),
      // An app that listens for errors hears of it there; one that does not still sees it, in its console.
      invalidAnswer: (message) => (this.events.has("error") ? this.events.emit("error", new Error(message)) : console.warn(`context-runtime: ${message}`)),
    };
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

  /**
   * Says a provider's state changed: MCP clients subscribed to its resources are told, and a provider declared with
   * `notifies: true` is asked again at the next turn (until then the runtime reuses its last answer). Resolves once
   * the runtime has it (a turn started after sees the change); never rejects. Dropped while disconnected: the runtime
   * forgets what it kept of a disconnected app's providers.
   */
  notifyChanged(provider: string): Promise<void> {
    if (!this.handlers.providers.has(provider)) throw new Error(`unknown provider '${provider}'`);
    if (!this.registered || !this.link) return Promise.resolve();
    // A request, not a notification: the promise settles once the runtime has it, so a turn started after sees the change.
    return this.link.request("contexts/changed", { provider }, this.requestTimeoutMs).then(
      () => undefined,
      () => undefined,
    );
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
      // Refused credentials, or declarations the runtime refuses (a tool's input schema that is not usable JSON Schema,
      // which the SDK checks only for shape): sending the same again cannot help.
      const fatal =
        error instanceof ContextAppError && (error.code === ErrorCode.Unauthorized || error.code === ErrorCode.Forbidden || error.code === ErrorCode.InvalidParams);
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
    const reply = handle ? await handle(this.handlers, request.params) : failure(ErrorCode.MethodNotFound, `unknown method '${request.method}'`);
    link.send(reply(request.id));
  }

  private notified(notification: JsonRpcNotification): void {
    // `turn.end` hooks are called without an id: the handler runs, and nothing is answered.
    if (notification.method === "hooks/call") return void runHookNotification(this.handlers.hooks, notification.params);
    if (notification.method !== "resources/removed") return;
    const params = ResourcesRemovedParams.safeParse(notification.params);
    if (params.success) this.events.emit("resourceRemoved", params.data);
  }
}
