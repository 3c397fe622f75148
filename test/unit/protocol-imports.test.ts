/**
 * The wire contract stands alone: `src/protocol/` imports only its own files and zod, and the SDK only its own
 * files, the protocol, zod and ws, so an SDK bundle never pulls in the runtime (or its JSON Schema validator).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "../..");

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every module specifier: static imports and re-exports (`from "…"`), side-effect imports, dynamic `import("…")` and `require("…")`. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [/\bfrom\s*["']([^"']+)["']/g, /\bimport\s*["']([^"']+)["']/g, /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g, /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) found.push(match[1]!);
  return found;
}

function offending(dir: string, allowed: (specifier: string) => boolean): string[] {
  return tsFiles(join(ROOT, dir)).flatMap((file) =>
    specifiers(readFileSync(file, "utf8"))
      .filter((specifier) => !allowed(specifier))
      .map((specifier) => `${relative(ROOT, file)}: ${specifier}`),
  );
}

const sameFolder = (specifier: string) => specifier.startsWith("./") && !specifier.slice(2).includes("..");

describe("imports of the wire contract and the SDK", () => {
  it("finds the files and their imports (the check below is not vacuous)", () => {
    expect(tsFiles(join(ROOT, "src/protocol")).length).toBeGreaterThan(5);
    expect(tsFiles(join(ROOT, "src/sdk")).length).toBeGreaterThan(3);
    expect(specifiers(`import { z } from "zod";\nexport type * from "../protocol/frontend";\nimport "./x";\nawait import("../core/y");`)).toEqual(["zod", "../protocol/frontend", "./x", "../core/y"]);
  });

  it("src/protocol imports only ./… and zod", () => {
    expect(offending("src/protocol", (s) => sameFolder(s) || s === "zod")).toEqual([]);
  });

  it("src/sdk imports only ./…, ../protocol/…, zod and ws", () => {
    expect(offending("src/sdk", (s) => sameFolder(s) || (s.startsWith("../protocol/") && !s.slice("../protocol/".length).includes("..")) || s === "zod" || s === "ws")).toEqual([]);
  });
});

describe("how zod is imported", () => {
  it("as a namespace wherever its values are used: `import { z }` keeps all of zod (its locales) in every bundle", () => {
    const named = tsFiles(join(ROOT, "src")).filter((file) => /^import\s*\{[^}]*\bz\b[^}]*\}\s*from\s*["']zod["']/m.test(readFileSync(file, "utf8")));
    expect(named.map((file) => relative(ROOT, file))).toEqual([]);
    expect(tsFiles(join(ROOT, "src")).some((file) => readFileSync(file, "utf8").includes('import * as z from "zod"'))).toBe(true);
  });
});
