import { PROTOCOL_VERSION } from "../../../src/protocol/methods";
import { appToken, type Identity } from "./runtime";
import { openSocket } from "./test-app";

export type ToolAnswer = (params: Record<string, unknown>, id: unknown, method: string) => { result?: unknown; error?: unknown; raw?: string } | null;

/** An app speaking the wire protocol by hand: declares what it is given, answers tools/call as scripted. */
export class ToolApp {
  readonly calls: Record<string, unknown>[] = [];
  private nextId = 1;
  private readonly waiting = new Map<number, (frame: Record<string, unknown>) => void>();

  private constructor(
    readonly ws: WebSocket,
    private readonly answer: ToolAnswer,
  ) {
    ws.addEventListener("message", (event) => this.onFrame(String(event.data)));
  }

  static async connect(id: Identity, app: string, init: Record<string, unknown>, answer: ToolAnswer = () => ({ result: { content: [] } })): Promise<ToolApp> {
    const tool = new ToolApp(await openSocket(await appToken(id, app)), answer);
    const res = await tool.initialize(app, init);
    if ("error" in res) throw new Error(`initialize failed: ${JSON.stringify(res.error)}`);
    return tool;
  }

  initialize(app: string, init: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.request("initialize", { protocolVersion: PROTOCOL_VERSION, app: { name: app, version: "1.0.0" }, ...init });
  }

  request(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  private onFrame(text: string): void {
    const frame = JSON.parse(text) as Record<string, unknown>;
    if (!("method" in frame)) {
      this.waiting.get(frame.id as number)?.(frame);
      this.waiting.delete(frame.id as number);
      return;
    }
    const params = frame.params as Record<string, unknown>;
    this.calls.push({ method: frame.method, ...params });
    const out = this.answer(params, frame.id, String(frame.method));
    if (out === null) return;
    this.ws.send(out.raw ?? JSON.stringify({ jsonrpc: "2.0", id: frame.id, ...(out.error ? { error: out.error } : { result: out.result }) }));
  }
}
