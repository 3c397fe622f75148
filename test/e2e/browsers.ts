/**
 * The engines a browser test runs in, each from Debian's packages: Chromium (chromium.ts), WebKit, Safari's engine, as
 * WebKitGTK's MiniBrowser under Xvfb (webkit.ts), and Firefox ESR (firefox.ts). An engine missing here is skipped with a
 * message saying how to install it, except in CI (`CI` set), where its tests fail (.ci/run installs all three).
 */
import type { BrowserPage } from "./browser-page";
import { CHROMIUM, Chromium, IN_CI } from "./chromium";
import { FIREFOX, Firefox } from "./firefox";
import { WEBKIT_INSTALLED, WebKit } from "./webkit";

export interface Engine {
  /** In artifacts' names. */
  name: "chromium" | "webkit" | "firefox";
  /** In tests' names. */
  title: string;
  installed: boolean;
  /** What installs it on Debian. */
  install: string;
  /** A page in a browser of its own: closing the page ends the browser. */
  launch(work: string): Promise<BrowserPage>;
}

export const ENGINES: readonly Engine[] = [
  { name: "chromium", title: "headless Chromium", installed: CHROMIUM !== undefined, install: "apt-get install -y chromium", launch: (work) => Chromium.page(CHROMIUM!, work) },
  { name: "webkit", title: "WebKit (WebKitGTK's MiniBrowser under Xvfb)", installed: WEBKIT_INSTALLED, install: "apt-get install -y webkit2gtk-driver xvfb", launch: () => WebKit.launch() },
  { name: "firefox", title: "headless Firefox", installed: FIREFOX !== undefined, install: "apt-get install -y firefox-esr", launch: (work) => Firefox.launch(FIREFOX!, work) },
];

/** The engines `test` runs in: those installed here, and in CI every one. A warning names each engine skipped. */
export function enginesFor(test: string): Engine[] {
  return ENGINES.filter((engine) => {
    if (engine.installed || IN_CI) return true;
    console.warn(`${test}: skipped in ${engine.title}, not installed here (${engine.install}; CI installs it and fails without it)`);
    return false;
  });
}

/** A page in `engine`; in CI, an engine that is not installed fails here. */
export async function openPage(engine: Engine, work: string): Promise<BrowserPage> {
  if (!engine.installed) throw new Error(`${engine.title} is not installed: CI must install it (${engine.install}; see .ci/run)`);
  return engine.launch(work);
}
