import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { mintToken } from "../../../src/http/auth";
import type { TurnResult } from "../../../src/protocol/frontend";

export const BASE = "https://runtime.test";

export interface Identity {
  tenant: string;
  user: string;
}

let counter = 0;
/** A fresh tenant per test keeps every test's hub and conversations apart. */
export function freshIdentity(): Identity {
  counter += 1;
  return { tenant: `t${Date.now().toString(36)}${counter}`, user: "alice" };
}

export function apiKey(id: Identity): Promise<string> {
  return mintToken(env.AUTH_SECRET, { kind: "frontend", tenant: id.tenant, sub: id.user });
}

export function appToken(id: Identity, app: string): Promise<string> {
  return mintToken(env.AUTH_SECRET, { kind: "app", tenant: id.tenant, sub: id.user, app });
}

export function worker(): Fetcher {
  return (exports as unknown as { default: Fetcher }).default;
}

/** A frontend calling the Worker with its API key. */
export class Frontend {
  constructor(private readonly key: string) {}

  static async for(id: Identity): Promise<Frontend> {
    return new Frontend(await apiKey(id));
  }

  request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const init: RequestInit = { method, headers: { Authorization: `Bearer ${this.key}`, ...headers } };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)["Content-Type"] ??= "application/json";
    }
    return worker().fetch(`${BASE}${path}`, init);
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.request(method, path, body);
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  }

  async conversation(agent?: string): Promise<string> {
    const { id } = await this.json<{ id: string }>("POST", "/v1/conversations", agent ? { agent } : {});
    return id;
  }

  turn(conversationId: string, body: Record<string, unknown>): Promise<TurnResult> {
    return this.json<TurnResult>("POST", `/v1/conversations/${conversationId}/turns`, body);
  }
}

/**
 * The reminder appendix of the last user message, or "" when the turn carried none, with the conversation's nonce
 * taken out of its tag (test/workers/trust-boundary.test.ts asserts the nonce itself).
 */
export function reminderOf(result: TurnResult): string {
  const last = result.messages.at(-1);
  const content = withoutNonce(typeof last?.content === "string" ? last.content : "");
  const at = content.indexOf("<system_reminder>");
  return at === -1 ? "" : content.slice(at);
}

/** Text with the runtime tags' nonce attribute taken out, for assertions about the rest. */
export function withoutNonce(text: string): string {
  return text.replace(/ nonce="[a-z0-9]{12}"/g, "");
}

/** Asserts a problem+json answer with this status and type, and returns its body. */
export async function expectProblem(res: Response, status: number, type: string): Promise<ProblemBody> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get("Content-Type")).toBe("application/problem+json");
  const body = JSON.parse(text) as ProblemBody;
  expect(body).toMatchObject({ type: `urn:context-runtime:problem:${type}`, status });
  expect(body.detail.length).toBeGreaterThan(0);
  return body;
}

export interface ProblemBody {
  type: string;
  status: number;
  detail: string;
  issues?: { path: string; message: string }[];
  /** Memory write refusals say why. */
  reason?: string;
  signal?: string;
}
