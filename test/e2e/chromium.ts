/**
 * Headless Chromium (Debian's `chromium`) for the browser tests, driven over the DevTools protocol with `ws`: no
 * browser download. Where Chromium is missing a test skips, saying so, except in CI (`CI` set), where it fails
 * (.ci/run installs it).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { BrowserPage, ProcessGroup } from "./browser-page";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
export const IN_CI = Boolean(process.env.CI);

export class Chromium {
  private constructor(
    private readonly group: ProcessGroup,
    private readonly http: string,
  ) {}

  /** Without background networking, Chromium makes no call of its own that this machine's closed network would refuse. */
  static async launch(executable: string, work: string): Promise<Chromium> {
    const flags = [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
      "--window-size=1400,1000",
      `--user-data-dir=${join(work, "profile")}`,
      "--remote-debugging-address=127.0.0.1",
      "--remote-debugging-port=0",
      "about:blank",
    ];
    const group = new ProcessGroup("chromium", executable, flags);
    const [, endpoint] = await group.waitFor(/DevTools listening on (ws:\/\/[^\s]+)/).catch(async (error: Error) => {
      await group.stop();
      throw error;
    });
    return new Chromium(group, `http://${new URL(endpoint!).host}`);
  }

  /** A new tab, with its page and runtime domains on; `close()` closes the tab, then does `after`. */
  async open(after: () => Promise<void> = async () => undefined): Promise<Cdp> {
    const created = (await (await fetch(`${this.http}/json/new?${encodeURIComponent("about:blank")}`, { method: "PUT" })).json()) as { id: string; webSocketDebuggerUrl: string };
    const page = await Cdp.connect(created.webSocketDebuggerUrl, () => fetch(`${this.http}/json/close/${created.id}`).then(() => undefined, () => undefined).then(after));
    await page.send("Page.enable");
    return page;
  }

  /** A tab in a browser of its own, for one test file: closing the tab ends the browser. */
  static async page(executable: string, work: string): Promise<Cdp> {
    const browser = await Chromium.launch(executable, work);
    return browser.open(() => browser.close()).catch(async (error: Error) => {
      await browser.close();
      throw error;
    });
  }

  close(): Promise<void> {
    return this.group.stop();
  }
}

/** One DevTools protocol session on a tab: navigate, evaluate, wait; keeps what the page logs, for failure messages. */
export class Cdp extends BrowserPage {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  readonly console: string[] = [];

  private constructor(
    private readonly socket: WebSocket,
    private readonly closeTab: () => Promise<void>,
  ) {
    super();
    socket.on("message", (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: Record<string, any> };
      if (message.id !== undefined) {
        const waiter = this.waiting.get(message.id);
        this.waiting.delete(message.id);
        if (message.error) waiter?.reject(new Error(message.error.message));
        else waiter?.resolve(message.result);
      } else if (message.method === "Runtime.consoleAPICalled") {
        this.console.push(message.params!.args.map((a: { value?: unknown; description?: string }) => a.value ?? a.description).join(" "));
      } else if (message.method === "Runtime.exceptionThrown") {
        this.console.push(`exception: ${message.params!.exceptionDetails.exception?.description ?? message.params!.exceptionDetails.text}`);
      }
    });
  }

  static async connect(url: string, closeTab: () => Promise<void>): Promise<Cdp> {
    const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    const cdp = new Cdp(socket, closeTab);
    await cdp.send("Runtime.enable");
    return cdp;
  }

  send<T = any>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Loads `url` afresh (a new fragment alone would not reload the page). */
  async navigate(url: string): Promise<void> {
    await this.send("Page.navigate", { url: "about:blank" });
    await this.send("Page.navigate", { url });
  }

  async eval<T>(expression: string): Promise<T> {
    const { result, exceptionDetails } = await this.send<{ result: { value: T }; exceptionDetails?: { text: string; exception?: { description?: string } } }>("Runtime.evaluate", { expression, returnByValue: true });
    if (exceptionDetails) throw new Error(`page: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
    return result.value;
  }

  async screenshot(): Promise<Buffer> {
    const { data } = await this.send<{ data: string }>("Page.captureScreenshot", { format: "png", captureBeyondViewport: true });
    return Buffer.from(data, "base64");
  }

  async logged(): Promise<string[]> {
    return [...this.console];
  }

  async close(): Promise<void> {
    this.socket.close();
    await this.closeTab();
  }
}
