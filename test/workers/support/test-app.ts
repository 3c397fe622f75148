import { ErrorCode } from "../../../src/protocol/jsonrpc";
import { APP_SUBPROTOCOL, PROTOCOL_VERSION } from "../../../src/protocol/methods";
import { appToken, BASE, worker, type Identity } from "./runtime";

type Handler = (params: Record<string, unknown>) => unknown | Promise<unknown>;
export interface ProviderSpec {
  name?: string;
  current?: Handler;
  list?: Handler;
  get?: Handler;
  /** Declared `notifies: true`: the app promises `contexts/changed`, so the hub may reuse its last answer. */
  notifies?: boolean;
}

/**
 * A minimal app speaking the wire protocol by hand over a real socket through
 * the Worker, so the hub is tested without the SDK (which has its own tests).
 */
export class TestApp {
  readonly calls: { method: string; params: Record<string, unknown> }[] = [];
  readonly notifications: { method: string; params: unknown }[] = [];
  private nextId = 1;
  private readonly waiting = new Map<number, (frame: Record<string, unknown>) => void>();

  private constructor(
    readonly name: string,
    readonly ws: WebSocket,
    private readonly providers: Record<string, ProviderSpec>,
    /** Answers `contexts/currentMany`, declared as a capability at initialize; without it the app has none. */
    private readonly currentMany?: Handler,
  ) {
    ws.addEventListener("message", (event) => void this.onFrame(String(event.data)));
  }

  static async connect(id: Identity, name: string, providers: Record<string, ProviderSpec>, options: { token?: string; currentMany?: Handler } = {}): Promise<TestApp> {
    const ws = await openSocket(options.token ?? (await appToken(id, name)));
    const app = new TestApp(name, ws, providers, options.currentMany);
    const init = await app.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      app: { name, version: "1.0.0" },
      contexts: Object.entries(providers).map(([pid, spec]) => ({
        id: pid,
        name: spec.name ?? pid,
        description: `${pid} provider`,
        methods: (["current", "list", "get"] as const).filter((m) => spec[m]),
        ...(spec.notifies ? { notifies: true } : {}),
      })),
      ...(options.currentMany ? { capabilities: { currentMany: true } } : {}),
    });
    if ("error" in init) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
    return app;
  }

  async createAgent(agentId: string, attachedContexts: string[], systemPrompt = `You are ${agentId}.`, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await this.request("agents/create", { agentId, name: agentId, systemPrompt, attachedContexts, ...extra });
    if ("error" in res) throw new Error(JSON.stringify(res.error));
    return (res.result as { agentId: string }).agentId;
  }

  request(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return this.send({ jsonrpc: "2.0", id, method, params }, id);
  }

  /** Sends any text and waits for the answer carrying `id` (or the next id-less error). */
  send(frame: unknown, id: number | null = null): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      this.waiting.set(id ?? 0, resolve);
      this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
    });
  }

  close(): void {
    this.ws.close(1000, "done");
  }

  private async onFrame(text: string): Promise<void> {
    if (text === "pong") return this.waiting.get(0)?.({ pong: true });
    const frame = JSON.parse(text) as Record<string, unknown>;
    if ("result" in frame || "error" in frame) {
      const key = typeof frame.id === "number" ? frame.id : 0;
      const resolve = this.waiting.get(key);
      this.waiting.delete(key);
      return resolve?.(frame);
    }
    const method = String(frame.method);
    const params = (frame.params ?? {}) as Record<string, unknown>;
    if (!("id" in frame)) {
      this.notifications.push({ method, params });
      return;
    }
    this.calls.push({ method, params });
    const kind = method.replace("contexts/", "") as "current" | "list" | "get";
    const handler = method === "contexts/currentMany" ? this.currentMany : this.providers[String(params.provider)]?.[kind];
    try {
      if (!handler) throw new Error(`no ${kind} handler`);
      const result = await handler(params);
      this.ws.send(JSON.stringify({ jsonrpc: "2.0", id: frame.id, result: result ?? null }));
    } catch (error) {
      this.ws.send(JSON.stringify({ jsonrpc: "2.0", id: frame.id, error: { code: ErrorCode.InternalError, message: (error as Error).message } }));
    }
  }
}

export async function openSocket(token: string, init: { protocols?: string[]; headers?: Record<string, string> } = {}): Promise<WebSocket> {
  const res = await worker().fetch(`${BASE}/v1/apps/connect`, {
    headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": [APP_SUBPROTOCOL, `bearer.${token}`].join(", "), ...init.headers },
  });
  const ws = res.webSocket;
  if (!ws) throw new Error(`no socket: ${res.status} ${await res.text()}`);
  ws.accept();
  return ws;
}
