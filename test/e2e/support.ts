/**
 * Helpers for the end-to-end tests: a fresh tenant per test, credentials signed
 * with the secret of the `wrangler dev` that global setup started, apps that are
 * closed after every test, and a WebSocket the test can cut and reconnect.
 */
import { afterEach, expect, inject } from "vitest";
import { freePort } from "../../scripts/local-runtime";
import { mintToken } from "../../src/http/auth";
import { ContextApp, ContextClient, type ContextAppEvents, type ContextAppOptions, type SocketLike, type TurnResult, type WebSocketCtor } from "../../src/sdk";

export const runtimeUrl = (): string => inject("runtimeUrl");

/** One tenant per test: its own hub, registrations and conversations. */
export interface Identity {
  tenant: string;
  user: string;
}

export function freshIdentity(): Identity {
  return { tenant: `e2e-${crypto.randomUUID().slice(0, 8)}`, user: "alice" };
}

export function apiKey(id: Identity): Promise<string> {
  return mintToken(inject("authSecret"), { kind: "frontend", tenant: id.tenant, sub: id.user });
}

export function appToken(id: Identity, app: string): Promise<string> {
  return mintToken(inject("authSecret"), { kind: "app", tenant: id.tenant, sub: id.user, app });
}

export async function frontend(id: Identity): Promise<ContextClient> {
  return new ContextClient({ url: runtimeUrl(), apiKey: await apiKey(id) });
}

// ── Apps, closed after every test ─────────────────────────────────────────────

const open = new Set<ContextApp>();

afterEach(async () => {
  const apps = [...open];
  open.clear();
  await Promise.all(apps.map((app) => app.close()));
});

type AppOptions = Omit<ContextAppOptions, "url" | "token" | "app"> & { name: string; token?: string };

/** A ContextApp for `id`, registered with the tenant's hub; closed after the test. */
export async function startApp(id: Identity, { name, token, ...options }: AppOptions): Promise<ContextApp> {
  const app = createApp(id, { name, token: token ?? (await appToken(id, name)), ...options });
  await app.connect();
  return app;
}

/** A ContextApp that is not connected yet; closed after the test all the same. */
export function createApp(id: Identity, { name, token, ...options }: AppOptions & { token: string }): ContextApp {
  const app = new ContextApp({
    url: runtimeUrl(),
    token,
    app: { name, version: "1.0.0" },
    reconnect: { initialDelayMs: 50, maxDelayMs: 500 },
    ...options,
  });
  open.add(app);
  return app;
}

/** Resolves with the next `event` the app emits. */
export function nextEvent<K extends keyof ContextAppEvents>(app: ContextApp, event: K, timeoutMs = 10_000): Promise<ContextAppEvents[K]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no '${String(event)}' event within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = app.on(event, (payload) => {
      clearTimeout(timer);
      off();
      resolve(payload);
    });
  });
}

/** Every payload of `event` the app emits from now on. */
export function record<K extends keyof ContextAppEvents>(app: ContextApp, event: K): ContextAppEvents[K][] {
  const seen: ContextAppEvents[K][] = [];
  app.on(event, (payload) => seen.push(payload));
  return seen;
}

// ── A network the test can cut ────────────────────────────────────────────────

/**
 * A WebSocket constructor for `ContextApp` that keeps the sockets it made, so a
 * test can drop the live one (as a network failure would) and keep the app from
 * getting back (its attempts go to a port nobody listens on) until `restore()`.
 */
export class Network {
  private readonly sockets: SocketLike[] = [];
  private deadUrl: string | null = null;
  attempts = 0;

  readonly WebSocket: WebSocketCtor;

  constructor() {
    const network = this;
    const Platform = globalThis.WebSocket as unknown as WebSocketCtor;
    this.WebSocket = class {
      constructor(url: string, protocols?: string | string[]) {
        network.attempts += 1;
        const socket = new Platform(network.deadUrl ?? url, protocols);
        network.sockets.push(socket);
        return socket;
      }
    } as unknown as WebSocketCtor;
  }

  /** Closes every open socket from the app's side and refuses new connections. */
  async cut(): Promise<void> {
    this.deadUrl = `ws://127.0.0.1:${await freePort()}/v1/apps/connect`;
    for (const socket of this.sockets) if (socket.readyState === 1) socket.close(3000, "network cut by the test");
  }

  restore(): void {
    this.deadUrl = null;
  }
}

// ── Reading turns ─────────────────────────────────────────────────────────────

/**
 * The reminder appendix of the turn's last user message, or "" when it carried none, with the conversation's nonce
 * taken out of its tag (test/workers/trust-boundary.test.ts and the spine test assert the nonce itself).
 */
export function reminderOf(turn: TurnResult): string {
  const last = turn.messages.at(-1);
  const content = (typeof last?.content === "string" ? last.content : "").replace(/^(<system_reminder) nonce="[a-z0-9]{12}">$/m, "$1>");
  const at = content.indexOf("<system_reminder>");
  return at === -1 ? "" : content.slice(at);
}

export function reminder(...blocks: string[]): string {
  return `<system_reminder>\n${blocks.join("\n\n")}\n</system_reminder>`;
}

/** Each message serialised, so prefixes compare byte for byte. */
export function serialised(turn: TurnResult): string[] {
  return turn.messages.map((m) => JSON.stringify(m));
}

/** Turn `before` (plus what was appended after it) is a byte-identical prefix of turn `after`. */
export function expectPrefix(before: string[], after: TurnResult): void {
  expect(serialised(after).slice(0, before.length)).toEqual(before);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
