/**
 * The workerd tests' Workers AI binding (`AI`, vitest.config.mts): a small worker whose `run(model, { text })`
 * answers like `@cf/baai/bge-m3` (`{ shape, data }`, one vector per text) with test/fixtures/fake-embedding.ts's
 * deterministic vectors, the same function the Node benches use. A stand-in for the remote model, not a mock of the
 * runtime: the hub calls it over a real binding. A text containing `fake-ai:fail` makes the call fail, and one
 * containing `fake-ai:slow` makes it answer after 5 s, so the fallbacks can be tested.
 */
import { readFileSync } from "node:fs";
import { transformWithOxc } from "vite";

const ENTRYPOINT = `
import { WorkerEntrypoint } from "cloudflare:workers";

export class FakeAi extends WorkerEntrypoint {
  async run(model, input) {
    if (model !== "@cf/baai/bge-m3") throw new Error("fake Workers AI: no model " + model);
    const texts = typeof input?.text === "string" ? [input.text] : input?.text;
    if (!Array.isArray(texts) || texts.length === 0 || texts.length > 100) throw new Error("fake Workers AI: text must be 1 to 100 strings");
    if (texts.some((t) => t.includes("fake-ai:fail"))) throw new Error("fake Workers AI: failed, as the text asked");
    if (texts.some((t) => t.includes("fake-ai:slow"))) await new Promise((resolve) => setTimeout(resolve, 5000));
    return { shape: [texts.length, FAKE_DIMENSIONS], data: texts.map(fakeEmbedding), pooling: "cls" };
  }
}

export default { fetch: () => new Response("fake Workers AI: call run() over RPC", { status: 404 }) };
`;

/** The fake's worker, for miniflare's `workers`: the fixture's embedding compiled to JavaScript, and the entrypoint. */
export async function fakeAiWorker(): Promise<{ name: string; modules: true; script: string; compatibilityDate: string }> {
  const fixture = new URL("../../fixtures/fake-embedding.ts", import.meta.url);
  const { code } = await transformWithOxc(readFileSync(fixture, "utf8"), fixture.pathname);
  // A worker may export only handlers and entrypoints: the fixture's exports become plain declarations.
  return { name: "fake-ai", modules: true, script: `${code.replace(/^export /gm, "")}\n${ENTRYPOINT}`, compatibilityDate: "2026-11-01" };
}
