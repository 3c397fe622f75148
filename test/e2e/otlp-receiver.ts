/**
 * A small OTLP/HTTP JSON receiver for tests and the bench: `POST /v1/traces` decoded into flat spans (ids, name,
 * parent, times, attributes as plain values). `headers` keeps each export's request headers.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  status: number;
  attributes: Record<string, unknown>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: AnyValue[] };
}
const plain = (v: AnyValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? v.arrayValue?.values.map(plain);

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  headers: IncomingHttpHeaders[];
  /** Every raw body received, as text. */
  bodies: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces" || !req.headers["content-type"]?.startsWith("application/json")) {
        res.writeHead(404).end();
        return;
      }
      const text = Buffer.concat(chunks).toString("utf8");
      bodies.push(text);
      headers.push(req.headers);
      const body = JSON.parse(text) as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] };
      for (const rs of body.resourceSpans)
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans) {
            spans.push({
              traceId: s.traceId as string,
              spanId: s.spanId as string,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId as string } : {}),
              name: s.name as string,
              kind: s.kind as number,
              start: BigInt(s.startTimeUnixNano as string),
              end: BigInt(s.endTimeUnixNano as string),
              status: (s.status as { code: number }).code,
              attributes: Object.fromEntries((s.attributes as { key: string; value: AnyValue }[]).map((a) => [a.key, plain(a.value)])),
            });
          }
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, headers, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
