/**
 * The slice of the WebSocket API the SDK uses, met by browsers' `WebSocket`, the
 * `ws` package and workerd (which has `addEventListener` but no `on*` properties).
 * The listener takes `any` so that each implementation's own event types fit.
 */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open" | "message" | "error" | "close", listener: (event: any) => void): void;
}

export type WebSocketCtor = new (url: string, protocols?: string | string[]) => SocketLike;

/** `readyState` of an open socket (the same in every implementation). */
export const OPEN = 1;

/**
 * The given constructor, else the platform's, else the `ws` package (Node 20 has no
 * global WebSocket). The import stays dynamic so browsers never load `ws`.
 */
export async function findWebSocket(given?: WebSocketCtor): Promise<WebSocketCtor> {
  if (given) return given;
  // Typed as always present, but Node 20 has none.
  const platform: WebSocketCtor | undefined = globalThis.WebSocket;
  if (platform) return platform;
  const ws: WebSocketCtor = (await import("ws")).default;
  return ws;
}
