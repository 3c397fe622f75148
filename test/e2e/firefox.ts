/**
 * Headless Firefox (Debian's `firefox-esr`) for the browser tests, driven over WebDriver BiDi, which Firefox speaks
 * itself: no geckodriver, no browser download. A fresh profile per launch; the remote agent's recommended preferences
 * (on by default) keep it from updating, reporting or syncing.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { BrowserPage, ProcessGroup } from "./browser-page";

export const FIREFOX = ["/usr/bin/firefox-esr", "/usr/bin/firefox"].find((p) => existsSync(p));

const SIZE = { width: 1400, height: 1000 };

/** A value as BiDi serialises it (script.RemoteValue); what a JSON value is made of is all a test reads. */
interface RemoteValue {
  type: string;
  value?: unknown;
}

export class Firefox extends BrowserPage {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private readonly lines: string[] = [];
  private context = "";

  private constructor(
    private readonly group: ProcessGroup,
    private readonly socket: WebSocket,
  ) {
    super();
    socket.on("message", (data) => {
      const message = JSON.parse(String(data)) as { type: string; id?: number; result?: unknown; error?: string; message?: string; method?: string; params?: Record<string, any> };
      if (message.type === "event") {
        if (message.method === "log.entryAdded") this.lines.push(message.params!.type === "javascript" ? `exception: ${message.params!.text}` : String(message.params!.text));
        return;
      }
      const waiter = this.waiting.get(message.id!);
      this.waiting.delete(message.id!);
      if (message.type === "error") waiter?.reject(new Error(`${message.error}: ${message.message}`));
      else waiter?.resolve(message.result);
    });
  }

  static async launch(executable: string, work: string): Promise<Firefox> {
    const profile = join(work, "firefox-profile");
    mkdirSync(profile, { recursive: true });
    const group = new ProcessGroup("firefox", executable, ["--headless", "--no-remote", "--profile", profile, "--remote-debugging-port=0", "about:blank"]);
    try {
      const [, endpoint] = await group.waitFor(/WebDriver BiDi listening on (ws:\/\/\S+)/);
      const socket = new WebSocket(`${endpoint}/session`, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
      await new Promise((resolve, reject) => {
        socket.once("open", resolve);
        socket.once("error", reject);
      });
      const page = new Firefox(group, socket);
      await page.send("session.new", { capabilities: {} });
      await page.send("session.subscribe", { events: ["log.entryAdded"] });
      const { contexts } = await page.send<{ contexts: { context: string }[] }>("browsingContext.getTree", { maxDepth: 0 });
      page.context = contexts[0]!.context;
      await page.send("browsingContext.setViewport", { context: page.context, viewport: SIZE });
      return page;
    } catch (error) {
      await group.stop();
      throw error;
    }
  }

  send<T = any>(method: string, params: Record<string, unknown>): Promise<T> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  async navigate(url: string): Promise<void> {
    await this.send("browsingContext.navigate", { context: this.context, url: "about:blank", wait: "complete" });
    await this.send("browsingContext.navigate", { context: this.context, url, wait: "complete" });
  }

  async eval<T>(expression: string): Promise<T> {
    const evaluated = await this.send<{ type: "success"; result: RemoteValue } | { type: "exception"; exceptionDetails: { text: string } }>("script.evaluate", {
      expression,
      target: { context: this.context },
      awaitPromise: true,
      resultOwnership: "none",
    });
    if (evaluated.type === "exception") throw new Error(`page: ${evaluated.exceptionDetails.text}`);
    return fromRemote(evaluated.result) as T;
  }

  async screenshot(): Promise<Buffer> {
    const { data } = await this.send<{ data: string }>("browsingContext.captureScreenshot", { context: this.context, origin: "document" });
    return Buffer.from(data, "base64");
  }

  async logged(): Promise<string[]> {
    return [...this.lines];
  }

  async close(): Promise<void> {
    this.socket.close();
    await this.group.stop();
  }
}

/** A JSON value from its BiDi serialisation; anything else (a node, a function, a map) is refused. */
function fromRemote(remote: RemoteValue): unknown {
  switch (remote.type) {
    case "undefined":
      return undefined;
    case "null":
      return null;
    case "string":
    case "boolean":
      return remote.value;
    case "number": {
      // NaN, -0 and the infinities come as strings; as JSON they are null and 0.
      const number = Number(remote.value);
      return Number.isFinite(number) ? number + 0 : null;
    }
    case "array":
      return (remote.value as RemoteValue[]).map(fromRemote);
    case "object":
      return Object.fromEntries((remote.value as [string | RemoteValue, RemoteValue][]).map(([key, value]) => [typeof key === "string" ? key : String(fromRemote(key)), fromRemote(value)]));
    default:
      throw new Error(`page: a ${remote.type} is not a JSON value`);
  }
}
