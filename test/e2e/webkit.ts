/**
 * WebKit, Safari's engine, for the browser tests: WebKitGTK's MiniBrowser (Debian's `webkit2gtk-driver`) driven over
 * WebDriver classic by WebKitWebDriver, on an Xvfb display of its own (`xvfb`), since MiniBrowser needs one. It is not
 * Safari: the same engine (WebCore, JavaScriptCore) in another shell.
 *
 * WebDriver classic reports nothing a page logs, and this MiniBrowser does not print it in automation mode: after each
 * load the page gets a collector for console calls and uncaught errors, so what a page logs while it loads is not seen.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../../scripts/local-runtime";
import { BrowserPage, ProcessGroup } from "./browser-page";

const XVFB = "/usr/bin/Xvfb";
const DRIVER = "/usr/bin/WebKitWebDriver";
/** MiniBrowser sits under the architecture's library directory (x86_64-linux-gnu, aarch64-linux-gnu, …). */
const MINIBROWSER = readdirSync("/usr/lib")
  .map((dir) => join("/usr/lib", dir, "webkit2gtk-4.1", "MiniBrowser"))
  .find((path) => existsSync(path));

export const WEBKIT_INSTALLED = existsSync(XVFB) && existsSync(DRIVER) && MINIBROWSER !== undefined;

const SIZE = { width: 1400, height: 1000 };
const LOG = "__browserTestLog";

/** Installed after each load: console calls and uncaught errors, kept on the page until `logged()` reads them. */
const COLLECTOR = `(() => {
  if (window.${LOG}) return true;
  const log = (window.${LOG} = []);
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    const original = console[level];
    console[level] = function (...args) { log.push(args.map(String).join(" ")); return original.apply(this, args); };
  }
  addEventListener("error", (event) => log.push("exception: " + event.message));
  addEventListener("unhandledrejection", (event) => log.push("exception: " + String(event.reason)));
  return true;
})()`;

export class WebKit extends BrowserPage {
  /** What pages already left logged. */
  private readonly lines: string[] = [];

  private constructor(
    private readonly display: ProcessGroup,
    private readonly driver: ProcessGroup,
    private readonly session: string,
  ) {
    super();
  }

  static async launch(): Promise<WebKit> {
    // -displayfd: Xvfb picks a free display and writes its number once it accepts connections.
    const display = new ProcessGroup("Xvfb", XVFB, ["-displayfd", "1", "-screen", "0", `${SIZE.width}x${SIZE.height}x24`, "-nolisten", "tcp"]);
    let driver: ProcessGroup | undefined;
    try {
      const [, number] = await display.waitFor(/^(\d+)$/m);
      const port = await freePort();
      driver = new ProcessGroup("WebKitWebDriver", DRIVER, [`--port=${port}`], { ...process.env, DISPLAY: `:${number}` });
      const driverUrl = `http://127.0.0.1:${port}`;
      await listening(driverUrl, driver);
      const { sessionId } = await request<{ sessionId: string }>("POST", `${driverUrl}/session`, {
        capabilities: { alwaysMatch: { "webkitgtk:browserOptions": { binary: MINIBROWSER, args: ["--automation"] } } },
      });
      const page = new WebKit(display, driver, `${driverUrl}/session/${sessionId}`);
      await page.command("POST", "/window/rect", SIZE);
      return page;
    } catch (error) {
      await driver?.stop();
      await display.stop();
      throw error;
    }
  }

  async navigate(url: string): Promise<void> {
    this.lines.push(...(await this.drain()));
    await this.command("POST", "/url", { url: "about:blank" });
    await this.command("POST", "/url", { url });
    await this.eval(COLLECTOR);
  }

  async eval<T>(expression: string): Promise<T> {
    return this.command<T>("POST", "/execute/sync", { script: `return (${expression});`, args: [] }).catch((error: Error) => {
      throw new Error(`page: ${error.message}`);
    });
  }

  /** WebDriver shows the viewport only: the window grows to the page's height for the shot, then goes back. */
  async screenshot(): Promise<Buffer> {
    const { height, chrome } = await this.eval<{ height: number; chrome: number }>(`({ height: document.documentElement.scrollHeight, chrome: outerHeight - innerHeight })`);
    await this.command("POST", "/window/rect", { width: SIZE.width, height: Math.max(SIZE.height, height + chrome) });
    try {
      return Buffer.from(await this.command<string>("GET", "/screenshot"), "base64");
    } finally {
      await this.command("POST", "/window/rect", SIZE);
    }
  }

  async logged(): Promise<string[]> {
    this.lines.push(...(await this.drain()));
    return [...this.lines];
  }

  async close(): Promise<void> {
    await this.command("DELETE", "").catch(() => undefined);
    await this.driver.stop();
    await this.display.stop();
  }

  /** What the page shown logged since it was last asked. */
  private drain(): Promise<string[]> {
    return this.eval<string[]>(`window.${LOG} ? window.${LOG}.splice(0) : []`).catch(() => []);
  }

  private command<T>(method: string, path: string, body?: unknown): Promise<T> {
    return request<T>(method, this.session + path, body);
  }
}

async function request<T>(method: string, url: string, body?: unknown): Promise<T> {
  const response = await fetch(url, { method, headers: { "Content-Type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const { value } = (await response.json()) as { value: T & { error?: string; message?: string } };
  if (!response.ok) throw new Error(`${value.error}: ${value.message}`);
  return value;
}

/** Waits for the driver to answer on its port. */
async function listening(url: string, driver: ProcessGroup): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && driver.child.exitCode === null && driver.child.signalCode === null) {
    if (await fetch(`${url}/status`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`WebKitWebDriver did not listen on ${url}:\n${driver.output}`);
}
