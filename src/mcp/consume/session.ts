/**
 * One client session with one MCP server, over Streamable HTTP, with the official SDK's `Client` (its transport is
 * `fetch` and web streams, so it runs in workerd as in Node; JSON Schema is checked with `@cfworker/json-schema`, which
 * generates no code, instead of the SDK's default Ajv, which workerd refuses).
 *
 * It connects when first used, keeps its lists fresh on `list_changed`, passes `resources/updated` on, and after a
 * failure waits out a backoff before trying again (and tries again by itself, so notifications resume). Every call
 * has a deadline that covers connecting too: a server that is offline, slow, answers garbage or drops its stream
 * fails the call with a reason, never hangs it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { PromptListChangedNotificationSchema, ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema, type Prompt, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { failWith, ok, type Result } from "../../core/problem";
import { backoffMs, failureOf, type ServerFailure } from "./mapping";

export interface ServerTarget {
  name: string;
  url: string;
  headers: Record<string, string>;
}

/** What a server lists, read after each connect and each `list_changed`. */
export interface ServerLists {
  tools: Tool[];
  prompts: Prompt[];
  /** Whether it offers resources, and whether it will notify about them. */
  resources: boolean;
  subscribe: boolean;
}

export interface SessionEvents {
  lists(lists: ServerLists): void;
  resourceUpdated(uri: string): void;
}

export type SessionState = "idle" | "connecting" | "online" | "offline";

/** Pages of a list read at most: a server that pages without end is read this far. */
const MAX_LIST_PAGES = 10;

export class McpServerSession {
  private client: Client | null = null;
  private connecting: Promise<Result<Client, ServerFailure>> | null = null;
  private failures = 0;
  private retryAt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private lastFailure: ServerFailure | null = null;
  /** URIs subscribed to in this session; subscribed again after a reconnect. */
  private readonly subscribed = new Set<string>();
  private subscribeOffered = false;

  constructor(
    private readonly target: ServerTarget,
    private readonly events: SessionEvents,
    private readonly now: () => number = Date.now,
  ) {}

  get name(): string {
    return this.target.name;
  }

  get state(): SessionState {
    if (this.client) return "online";
    if (this.connecting) return "connecting";
    return this.lastFailure ? "offline" : "idle";
  }

  /** Why the last attempt failed, and when the next may start; undefined while the session is fine. */
  get detail(): string | undefined {
    if (!this.lastFailure || this.client) return undefined;
    const wait = Math.max(0, this.retryAt - this.now());
    return `${this.lastFailure.detail}${wait > 0 ? ` (next attempt in ${Math.ceil(wait / 1000)} s)` : ""}`;
  }

  /**
   * Runs `call` on the session under `deadlineMs` (connecting first if need be): its answer, or why there is none.
   * A session the server ended (HTTP 404) is opened again once, within the same deadline.
   */
  async request<T>(deadlineMs: number, call: (client: Client, options: { timeout: number; signal: AbortSignal }) => Promise<T>): Promise<Result<T, ServerFailure>> {
    const deadline = this.now() + deadlineMs;
    for (let attempt = 0; ; attempt++) {
      const client = await this.ready(deadline);
      if (!client.ok) return client;
      const left = Math.max(1, deadline - this.now());
      try {
        return ok(await withDeadline(call(client.value, { timeout: left, signal: AbortSignal.timeout(left) }), left, this.target.name));
      } catch (error) {
        const failure = failureOf(this.target.name, error);
        // A forgotten session is no fault of the server's (it restarted): open another at once, no backoff.
        if (isSessionGone(error)) {
          this.drop(client.value, null);
          if (attempt === 0 && deadline > this.now()) continue;
        } else if (failure.reason === "offline") this.drop(client.value, failure);
        return failWith(failure);
      }
    }
  }

  /** Asks to be told when `uri` changes, once per session, when the server offers subscriptions; never waited for. */
  watch(uri: string): void {
    if (this.subscribed.has(uri) || !this.client || !this.subscribeOffered) return;
    this.subscribed.add(uri);
    void this.request(10_000, (client, options) => client.subscribeResource({ uri }, options)).then((done) => {
      if (!done.ok) this.subscribed.delete(uri);
    });
  }

  /** Ends the session for good (the server was removed): the server is told, nothing reconnects. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    if (!client) return;
    const transport = client.transport as StreamableHTTPClientTransport | undefined;
    await withDeadline(transport?.terminateSession() ?? Promise.resolve(), 2_000, this.target.name).catch(() => undefined);
    await client.close().catch(() => undefined);
  }

  /** The connection being opened, if one is: a turn about to list the server's tools waits for it (bounded). */
  get opening(): Promise<unknown> | null {
    return this.connecting;
  }

  /** Connects now, if it is not connected and its backoff allows: after a registration, or when the hub wakes. */
  async connect(deadlineMs: number): Promise<Result<true, ServerFailure>> {
    const client = await this.ready(this.now() + deadlineMs);
    return client.ok ? ok(true) : client;
  }

  private async ready(deadline: number): Promise<Result<Client, ServerFailure>> {
    if (this.client) return ok(this.client);
    if (this.closed) return failWith({ reason: "offline", detail: `MCP server '${this.target.name}' was removed` });
    if (!this.connecting) {
      if (this.lastFailure && this.now() < this.retryAt) return failWith({ reason: "offline", detail: this.detail ?? this.lastFailure.detail });
      this.connecting = this.open().finally(() => (this.connecting = null));
    }
    const left = deadline - this.now();
    if (left <= 0) return failWith({ reason: "timeout", detail: `MCP server '${this.target.name}' did not connect within the deadline` });
    return withDeadline(this.connecting, left, this.target.name).catch((error: unknown) => failWith(failureOf(this.target.name, error)));
  }

  /** Initialize, then the lists; the whole of it bounded, so a server that stalls midway fails rather than hangs. */
  private async open(): Promise<Result<Client, ServerFailure>> {
    const client = new Client({ name: "context-runtime", version: "1" }, { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    const transport = new StreamableHTTPClientTransport(new URL(this.target.url), {
      requestInit: { headers: this.target.headers },
      reconnectionOptions: { initialReconnectionDelay: 1_000, maxReconnectionDelay: 30_000, reconnectionDelayGrowFactor: 2, maxRetries: 3 },
    });
    try {
      await withDeadline(client.connect(transport, { timeout: CONNECT_MS }), CONNECT_MS, this.target.name);
      const capabilities = client.getServerCapabilities() ?? {};
      this.subscribeOffered = capabilities.resources?.subscribe === true;
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => this.events.resourceUpdated(n.params.uri));
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refresh(client));
      client.setNotificationHandler(PromptListChangedNotificationSchema, () => this.refresh(client));
      // The message only: the SDK's errors never carry the headers sent, but a body may be long.
      client.onerror = (error) => console.warn("MCP server stream", this.target.name, error.message.slice(0, 200));
      client.onclose = () => this.drop(client, { reason: "offline", detail: `MCP server '${this.target.name}': the session ended` });
      const lists = await withDeadline(listsOf(client), CONNECT_MS, this.target.name);
      if (this.closed) {
        void client.close().catch(() => undefined);
        return failWith({ reason: "offline", detail: `MCP server '${this.target.name}' was removed` });
      }
      this.client = client;
      this.failures = 0;
      this.lastFailure = null;
      this.events.lists(lists);
      const again = [...this.subscribed];
      this.subscribed.clear();
      for (const uri of again) this.watch(uri);
      return ok(client);
    } catch (error) {
      void client.close().catch(() => undefined);
      return this.failed(failureOf(this.target.name, error));
    }
  }

  private failed(failure: ServerFailure): Result<never, ServerFailure> {
    this.failures++;
    this.lastFailure = failure;
    this.retryAt = this.now() + backoffMs(this.failures);
    this.scheduleRetry();
    return failWith(failure);
  }

  /**
   * The session broke: the next use, or the retry timer, opens another; after `failure` (the connection failed) only
   * once its backoff has passed, after none (the server forgot the session) at once.
   */
  private drop(client: Client, failure: ServerFailure | null): void {
    if (this.client !== client) return;
    this.client = null;
    client.onclose = undefined;
    void client.close().catch(() => undefined);
    if (failure && !this.closed) this.failed(failure);
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.client && !this.connecting && !this.closed) void this.ready(this.now() + CONNECT_MS);
    }, Math.max(0, this.retryAt - this.now()));
  }

  private refresh(client: Client): void {
    void withDeadline(listsOf(client), CONNECT_MS, this.target.name).then(
      (lists) => this.client === client && this.events.lists(lists),
      (error: unknown) => console.warn("MCP server lists not refreshed", this.target.name, failureOf(this.target.name, error).detail),
    );
  }
}

/** How long opening a session (initialize and the first lists) may take, whatever the caller's deadline. */
const CONNECT_MS = 10_000;

async function listsOf(client: Client): Promise<ServerLists> {
  const capabilities = client.getServerCapabilities() ?? {};
  const options = { timeout: CONNECT_MS };
  const tools = capabilities.tools ? await allPages((params) => client.listTools(params, options).then((l) => ({ items: l.tools, nextCursor: l.nextCursor }))) : [];
  const prompts = capabilities.prompts ? await allPages((params) => client.listPrompts(params, options).then((l) => ({ items: l.prompts, nextCursor: l.nextCursor }))) : [];
  return { tools, prompts, resources: capabilities.resources !== undefined, subscribe: capabilities.resources?.subscribe === true };
}

/** Every item of a paged MCP list, up to MAX_LIST_PAGES pages. */
async function allPages<T>(page: (params: { cursor?: string }) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < MAX_LIST_PAGES; n++) {
    const listed = await page(cursor ? { cursor } : {});
    items.push(...listed.items);
    if (!(cursor = listed.nextCursor)) break;
  }
  return items;
}

/** The server ended the session (Streamable HTTP answers 404 to an unknown session id): a new one is needed. */
function isSessionGone(error: unknown): boolean {
  return (error as { code?: unknown })?.code === 404 && error instanceof Error && error.message.startsWith("Streamable HTTP error");
}

/** `work`, or a timeout failure (code -32001, as the SDK's own) once `ms` pass: nothing waits on a server longer. */
function withDeadline<T>(work: Promise<T>, ms: number, server: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: -32001, server })), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
