import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface Reply {
  status: number;
  type?: string;
  body?: string;
  delayMs?: number;
}

/**
 * A real local HTTP server standing in for a remote one: it records each
 * request and answers with whatever `reply` holds when the request ends.
 */
export interface RecordingServer {
  readonly origin: string;
  readonly seen: SeenRequest[];
  reply: Reply;
  /** Forget what was seen and answer `reply` from now on. */
  reset(reply: Reply): void;
  close(): Promise<void>;
}

export async function startRecordingServer(): Promise<RecordingServer> {
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      recording.seen.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
      const { status, type, body: answer, delayMs = 0 } = recording.reply;
      setTimeout(() => {
        if (response.destroyed) return;
        response.writeHead(status, type ? { "content-type": type } : {});
        response.end(answer);
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const recording: RecordingServer = {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen: [],
    reply: { status: 200 },
    reset(reply) {
      recording.seen.length = 0;
      recording.reply = reply;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return recording;
}
