/** One socket's JSON-RPC traffic: request ids and their answers, heartbeat and liveness. */
import { readFrame, rpcRequest, type JsonRpcId, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from "../protocol/jsonrpc";
import { HEARTBEAT } from "../protocol/methods";
import { OPEN, type SocketLike } from "./websocket";

/** An answer frame still waiting for the id of the request it answers. */
export type Reply = (id: JsonRpcId) => string;

const HEARTBEAT_TIMEOUT = { code: 4000, reason: "no frame received within two heartbeats" };

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

export interface LinkHandlers {
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
export class RpcLink {
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
    // The runtime's frames are always well formed; anything else is ignored rather than guessed at.
    const incoming = readFrame(json);
    if (incoming.kind === "request") this.handlers.onRequest(incoming.frame);
    else if (incoming.kind === "notification") this.handlers.onNotification(incoming.frame);
    else if (incoming.kind === "response") this.settle(incoming.frame);
  }

  private settle(frame: JsonRpcResponse): void {
    if (frame.id === null) return;
    const pending = this.pending.get(frame.id);
    if (!pending) return;
    this.pending.delete(frame.id);
    clearTimeout(pending.timer);
    if ("error" in frame) pending.reject(new ContextAppError(frame.error.code, frame.error.message, frame.error.data));
    else pending.resolve(frame.result);
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
