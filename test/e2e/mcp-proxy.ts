/**
 * A bearer-token proxy for MCP clients that send no auth header (the conformance suite): every request is forwarded
 * as it is — method, path, Host, Origin, the other headers, the body streamed both ways — to the runtime, with
 * `Authorization: Bearer <key>` added. It listens on 127.0.0.1; a client may name it `localhost`.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";

export interface BearerProxy {
  port: number;
  close(): Promise<void>;
}

export function startBearerProxy(target: string, key: string): Promise<BearerProxy> {
  const upstream = new URL(target);
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const forwarded = request(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: { ...incoming.headers, authorization: `Bearer ${key}` } },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on("error", (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { "Content-Type": "text/plain" });
      outgoing.end(`proxy: ${error.message}`);
    });
    // A client that hangs up (a closed SSE stream) ends the upstream request too.
    outgoing.on("close", () => forwarded.destroy());
    incoming.pipe(forwarded);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
