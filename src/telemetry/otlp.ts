/**
 * Spans out over OTLP/HTTP JSON (docs/telemetry.md): `POST {OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`, with the headers
 * of `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,key=value`, as the OpenTelemetry SDKs read it). Written here rather than
 * taken from @opentelemetry/exporter-trace-otlp-http: the wire format is one small JSON document, and the SDK's
 * exporter brings its providers, processors and Node-shaped transports for what is one `fetch`.
 *
 * Export is best effort, after the answer (under `waitUntil`): it never slows or fails a turn. A failed export is
 * dropped and logged, once until an export succeeds again, so a collector that is down does not flood the log.
 */
import type { OtlpTarget } from "../platform/config";

export type AttributeValue = string | number | boolean | readonly string[];

/** One finished span, as the builders make it: times in ms since the epoch (the Worker's clock). */
export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: "internal" | "client";
  start: number;
  end: number;
  attributes: Record<string, AttributeValue | undefined>;
  /** Set when the operation failed: the error's type (a code, never a message). */
  error?: string;
}

const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
export const newTraceId = () => hex(16);
export const newSpanId = () => hex(8);

const SPAN_KIND = { internal: 1, client: 3 } as const;
const nanos = (ms: number) => `${BigInt(Math.round(ms * 1000)) * 1000n}`;

function anyValue(value: AttributeValue): Record<string, unknown> {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return { arrayValue: { values: value.map((v) => ({ stringValue: v })) } };
}

function attributes(record: Record<string, AttributeValue | undefined>): { key: string; value: Record<string, unknown> }[] {
  return Object.entries(record).flatMap(([key, value]) => (value === undefined ? [] : [{ key, value: anyValue(value) }]));
}

/** The OTLP/JSON `ExportTraceServiceRequest` for these spans, under one resource (the runtime) and one scope. */
export function otlpRequest(spans: readonly Span[]): unknown {
  return {
    resourceSpans: [
      {
        resource: { attributes: attributes({ "service.name": "context-runtime", "telemetry.sdk.language": "webjs", "telemetry.sdk.name": "context-runtime" }) },
        scopeSpans: [
          {
            scope: { name: "context-runtime" },
            spans: spans.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: SPAN_KIND[s.kind],
              startTimeUnixNano: nanos(s.start),
              endTimeUnixNano: nanos(Math.max(s.end, s.start)),
              attributes: attributes(s.error === undefined ? s.attributes : { ...s.attributes, "error.type": s.error }),
              status: s.error === undefined ? { code: 1 } : { code: 2 },
            })),
          },
        ],
      },
    ],
  };
}

let failing = false;

/** Posts the spans; a failure is logged (once until the next success) and dropped. Never throws. */
export async function exportSpans(target: OtlpTarget, spans: readonly Span[]): Promise<void> {
  if (spans.length === 0) return;
  try {
    const res = await fetch(target.url, { method: "POST", headers: { "Content-Type": "application/json", ...target.headers }, body: JSON.stringify(otlpRequest(spans)) });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    failing = false;
  } catch (error) {
    if (!failing) console.warn(`telemetry: spans not exported to ${new URL(target.url).origin} (dropped): ${error instanceof Error ? error.message : String(error)}`);
    failing = true;
  }
}
