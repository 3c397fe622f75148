/**
 * What a browser test needs of a page, whatever the engine: load a URL, read a page expression as JSON, wait for a
 * condition, take a screenshot, read what the page logged. Chromium is driven over the DevTools protocol (chromium.ts),
 * WebKit over WebDriver classic (webkit.ts), Firefox over WebDriver BiDi (firefox.ts); browsers.ts lists them. Each
 * browser runs in a process group of its own, ended whole when the test is done.
 */
import { spawn, type ChildProcess } from "node:child_process";

export abstract class BrowserPage {
  /** Loads `url` afresh, even where only its fragment differs from the page shown. */
  abstract navigate(url: string): Promise<void>;
  /** The value of a page expression, as JSON. */
  abstract eval<T>(expression: string): Promise<T>;
  /** The whole page as a PNG. */
  abstract screenshot(): Promise<Buffer>;
  /** What the page logged: console calls and uncaught errors. */
  abstract logged(): Promise<string[]>;
  abstract close(): Promise<void>;

  /** Waits until `condition` (a page expression) holds; `describe` says what the page showed when it never did. */
  async until(condition: string, timeoutMs = 30_000, describe = `document.body?.innerText.slice(0, 200) ?? ""`): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await this.eval<boolean>(`(() => { try { return Boolean(${condition}); } catch { return false; } })()`).catch(() => false)) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    const shown = await this.eval<string>(describe).catch(() => "");
    const logged = await this.logged().catch(() => []);
    throw new Error(`the page did not reach ${condition} in ${timeoutMs} ms; it shows: ${shown}; console: ${logged.join(" | ")}`);
  }
}

/** A process that leads a group of its own, so that stopping it ends every process it started; keeps what it writes. */
export class ProcessGroup {
  readonly child: ChildProcess;
  private written = "";

  constructor(
    private readonly name: string,
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], detached: true, env });
    this.child.stdout!.on("data", (d: Buffer) => (this.written += d));
    this.child.stderr!.on("data", (d: Buffer) => (this.written += d));
  }

  /** What it has written so far, stdout and stderr together. */
  get output(): string {
    return this.written;
  }

  /** The first match of `pattern` in what the process writes, once it has written it. */
  waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.written);
        if (!match) return;
        done();
        resolve(match);
      };
      const exited = (code: number | null) => {
        done();
        reject(new Error(`${this.name} exited (${code}):\n${this.written}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.name} did not start in ${timeoutMs / 1000} s:\n${this.written}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.child.stdout!.off("data", check);
        this.child.stderr!.off("data", check);
        this.child.off("exit", exited);
      };
      this.child.stdout!.on("data", check);
      this.child.stderr!.on("data", check);
      this.child.once("exit", exited);
      check();
    });
  }

  /** SIGTERM to the whole group; once the leader is gone (or after 5 s), SIGKILL to what is left of it. */
  async stop(): Promise<void> {
    if (!signal(this.child.pid!, "SIGTERM")) return;
    if (this.child.exitCode === null && this.child.signalCode === null) await Promise.race([new Promise((r) => this.child.once("exit", r)), new Promise((r) => setTimeout(r, 5_000))]);
    signal(this.child.pid!, "SIGKILL");
  }
}

/** Signals process group `group`; false when no process is left in it. */
function signal(group: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, sig);
    return true;
  } catch {
    return false;
  }
}
