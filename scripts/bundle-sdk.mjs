#!/usr/bin/env node
// The SDK (src/sdk: ContextClient, ContextApp) as a package and in the browser, with esbuild (wrangler's own).
//
//   node scripts/bundle-sdk.mjs build   `npm run build`: dist/index.js and dist/client.js (ContextClient alone; ESM for
//                                       Node and bundlers, zod and ws stay imports), dist/browser/context-runtime.js (ESM for a <script type="module">,
//                                       zod inside, minified), dist/browser/context-client.js (ContextClient alone)
//                                       and dist/types/ (the .d.ts, by tsc -p tsconfig.build.json)
//   node scripts/bundle-sdk.mjs browser <file>   the browser bundle alone, at <file> (test/e2e/browser-sdk.test.ts)
//   node scripts/bundle-sdk.mjs         `npm run bundle:sdk`: measures the browser bundle of the whole SDK and of
//                                       ContextClient alone (raw and gzipped, and bytes by input package: what zod
//                                       costs). `--json` prints the figures as JSON.
//
// In the browser `ws` is never loaded: src/sdk/websocket.ts imports it dynamically, only where there is no global
// WebSocket, and the bundles keep it external (package.json maps it to nothing for bundlers, `"browser": {"ws": false}`).
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const ENTRY = join(ROOT, "src/sdk/index.ts");
const DIST = join(ROOT, "dist");

/**
 * `import { z } from "zod"` (how src/protocol and src/sdk import it) hands the bundler zod's whole namespace as one
 * value, locales and all: about 440 KiB minified whatever the SDK uses. The same import as `import * as z` lets it
 * keep only what is used. The source is left as written (the Worker does not care); the package's bundles rewrite it.
 */
const zodNamespace = {
  name: "zod-namespace-import",
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/](protocol|sdk)[\\/][^\\/]+\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, "utf8").replace(/^import \{ z \} from "zod";$/m, 'import * as z from "zod";'),
      loader: "ts",
    }));
  },
};

const browserOptions = {
  plugins: [zodNamespace],
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  external: ["ws"],
  legalComments: "none",
  logLevel: "warning",
};

/** The browser bundle of the whole SDK (what `npm run build` puts in dist/browser/context-runtime.js) at `outfile`. */
export async function buildBrowserBundle(outfile) {
  await build({ ...browserOptions, entryPoints: [ENTRY], outfile, sourcemap: true });
}

async function buildPackage() {
  rmSync(DIST, { recursive: true, force: true });
  // For Node and bundlers: one module, its dependencies left as imports so they are installed and deduplicated.
  // ContextClient is its own entry (./client), and split out of index.js too: with `"sideEffects": false` a bundler
  // that sees only ContextClient imported from "." drops ContextApp's chunk, and zod with it.
  await build({
    plugins: [zodNamespace],
    entryPoints: { index: ENTRY, client: join(ROOT, "src/sdk/context-client.ts"), app: join(ROOT, "src/sdk/context-app.ts") },
    outdir: DIST,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    external: ["zod", "ws"],
    sourcemap: true,
    logLevel: "warning",
  });
  // For a page without a bundler: everything but ws in one minified module.
  await buildBrowserBundle(join(DIST, "browser/context-runtime.js"));
  // ContextClient alone (no zod at all: it imports only types), for pages that only run turns.
  await build({ ...browserOptions, entryPoints: [join(ROOT, "src/sdk/context-client.ts")], outfile: join(DIST, "browser/context-client.js"), sourcemap: true });
  const tsc = spawnSync(join(ROOT, "node_modules/.bin/tsc"), ["-p", join(ROOT, "tsconfig.build.json")], { stdio: "inherit" });
  if (tsc.status !== 0) throw new Error("tsc -p tsconfig.build.json failed");
  addJsExtensions(join(DIST, "types"));
  console.log(`built ${relative(ROOT, DIST)}/: index.js, client.js, browser/context-runtime.js, browser/context-client.js, types/sdk/index.d.ts`);
}

/** Relative specifiers in the declarations get `.js`, so TypeScript resolves them under node16/nodenext too. */
function addJsExtensions(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) addJsExtensions(path);
    else if (name.endsWith(".d.ts")) {
      const text = readFileSync(path, "utf8").replace(/(from\s+["']|import\(["'])(\.{1,2}\/[^"']+?)(["'])/g, (_, head, spec, tail) => `${head}${spec.endsWith(".js") ? spec : `${spec}.js`}${tail}`);
      writeFileSync(path, text);
    }
  }
}

/** Bytes in the minified output by where they came from: a package in node_modules, or the SDK's own source. */
function bytesByPackage(metafile) {
  const by = {};
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const key = match ? match[1] : input.startsWith("src/sdk/") ? "src/sdk" : input.startsWith("src/protocol/") ? "src/protocol" : input;
      by[key] = (by[key] ?? 0) + bytesInOutput;
    }
  }
  return Object.fromEntries(Object.entries(by).sort((a, b) => b[1] - a[1]));
}

async function measure(name, stdin, options = {}) {
  const result = await build({ ...browserOptions, ...options, stdin: { contents: stdin, resolveDir: ROOT, loader: "ts" }, write: false, metafile: true });
  const code = result.outputFiles[0].contents;
  return {
    name,
    bytes: code.length,
    gzipBytes: gzipSync(code, { level: 9 }).length,
    byPackage: bytesByPackage(result.metafile),
    loadsWs: /["']ws["']/.test(Buffer.from(code).toString("utf8")),
  };
}

export async function measureBundles() {
  return [
    await measure("whole SDK (ContextApp + ContextClient)", `export * from "./src/sdk/index.ts";`),
    await measure("ContextClient only", `export { ContextClient, ContextRuntimeError } from "./src/sdk/index.ts";`),
    await measure("ContextApp only", `export { ContextApp } from "./src/sdk/index.ts";`),
    await measure("whole SDK, zod imported as the source writes it (no rewrite)", `export * from "./src/sdk/index.ts";`, { plugins: [] }),
  ];
}

const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [mode, outfile] = process.argv.slice(2);
  if (mode === "build") {
    await buildPackage();
  } else if (mode === "browser" && outfile) {
    await buildBrowserBundle(outfile);
  } else {
    const figures = await measureBundles();
    if (process.argv.includes("--json")) console.log(JSON.stringify(figures, null, 2));
    else {
      for (const f of figures) {
        const zod = f.byPackage.zod ?? 0;
        console.log(`${f.name}: ${kb(f.bytes)} minified, ${kb(f.gzipBytes)} gzipped; zod ${kb(zod)} (${((100 * zod) / f.bytes).toFixed(0)} % of it)`);
        for (const [input, bytes] of Object.entries(f.byPackage)) console.log(`    ${input.padEnd(16)} ${kb(bytes).padStart(10)}`);
      }
    }
  }
}
