/**
 * The inspector page (`GET /inspect`, docs/inspector.md) in every engine of browsers.ts (Chromium, WebKit, Firefox),
 * against the shared `wrangler dev`: one scripted conversation with an app on a real socket (contexts that
 * change, a tool round trip, an input hook's rewrite, a call the guard denies, a subagent, a compaction on a small
 * window, reported usage), then the page's DOM is read: every block of a known turn with the runtime's token count,
 * the diff naming the changed context, the prefix break naming the compaction, and a what-if under a smaller budget
 * reading fewer tokens. Screenshots, one set per engine, go to test/e2e/artifacts/ (ignored by git).
 *
 * An engine missing: skipped with a message, except in CI (`CI` set), where its tests fail.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ContextProvider, PastTurn, TurnResult } from "../../src/sdk";
import type { BrowserPage } from "./browser-page";
import { enginesFor, openPage } from "./browsers";
import { apiKey, freshIdentity, frontend, runtimeUrl, startApp } from "./support";

const ARTIFACTS = join(import.meta.dirname, "artifacts");
const ENGINES = enginesFor("inspector");

type Reply = NonNullable<Parameters<Awaited<ReturnType<typeof frontend>>["turn"]>[1]["reply"]>;
const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, type: "function" as const, function: { name, arguments: JSON.stringify(args) } });
const calls = (...toolCalls: ReturnType<typeof call>[]): Reply => ({ role: "assistant", content: null, tool_calls: toolCalls });
const says = (content: string): Reply => ({ role: "assistant", content });

const DOSSIER = [
  "The launch of Project Heron is planned for 14 March at the Lisbon office, with a press call at 10:00 WET.",
  "Budget line 7 (events) holds EUR 18,400; line 9 (travel) holds EUR 6,250 after the February revision.",
  "Owners: Ana Ribeiro (product), Tomás Vidal (engineering), Priya Nair (marketing).",
  "Open risks: the payment provider's sandbox certificate expires on 2 March; the Portuguese translation is at 80 %.",
].join("\n");

/** The scripted conversation: what the page is then asked about. */
interface Scripted {
  conversation: string;
  key: string;
  turns: TurnResult[];
  /** The turn whose context `desk:doc` changed. */
  docChanged: TurnResult;
  compacted: TurnResult;
  childConversation: string;
}

async function script(): Promise<Scripted> {
  const id = freshIdentity();
  const doc = { version: "v1", body: "Project Heron launch plan.\nIntro: we launch in spring." };
  const contexts: ContextProvider[] = [
    { id: "doc", name: "Document", description: "The open document", getCurrent: () => ({ title: "Launch plan", content: doc.body, version: doc.version }) },
    { id: "profile", name: "Profile", description: "Who the user is", getCurrent: () => ({ title: "Profile", content: "Name: Ana Ribeiro\nRole: product lead" }) },
    {
      id: "calendar",
      name: "Calendar",
      description: "The user's day",
      getCurrent: () => {
        throw new Error("calendar is down for maintenance");
      },
    },
  ];
  const app = await startApp(id, {
    name: "desk",
    contexts,
    tools: [
      { name: "lookup", description: "Look up facts in the launch dossier.", inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] }, handler: ({ query }) => `Entry for "${String(query)}".\n${DOSSIER}` },
      { name: "wipe", description: "Delete the launch plan.", inputSchema: { type: "object", properties: {} }, annotations: { destructiveHint: true }, handler: () => "wiped" },
    ],
    hooks: [{ name: "spelling", point: "input", handler: ({ message }) => (message.includes("colour") ? { action: "rewrite", message: message.replaceAll("colour", "color") } : undefined) }],
  });
  await app.createAgent({ agentId: "researcher", name: "Researcher", systemPrompt: "You are the Researcher.", tools: ["lookup"] });
  const { agentId: agent } = await app.createAgent({
    agentId: "writer",
    name: "Launch Writer",
    systemPrompt: "You are the Launch Writer. You help the user write the launch plan.",
    attachedContexts: ["desk:doc", "desk:profile", "desk:calendar"],
    tools: ["lookup", "wipe"],
    subagents: ["researcher"],
    guard: { rules: [{ tool: "desk:wipe", verdict: "deny", reason: "the plan is never deleted from a chat" }] },
  });
  const client = await frontend(id);
  const { id: conversation } = await client.createConversation({ agent, compaction: { contextWindow: 2_048, outputReserve: 256, target: 0.5, tailGroups: 2, tailTokens: 0, keepToolResults: 1 } });
  const turns: TurnResult[] = [];
  const turn = async (body: Omit<Parameters<typeof client.turn>[1], "agent">) => {
    const result = await client.turn(conversation, { agent, ...body });
    turns.push(result);
    return result;
  };

  await turn({ message: "Hello! Let's work on the launch plan." });
  doc.version = "v2";
  doc.body = "Project Heron launch plan.\nIntro: we launch on 14 March in Lisbon.";
  const docChanged = await turn({ reply: says("Happy to help."), message: "I rewrote the intro; please read it." });
  await turn({ reply: says("The intro names the date now."), message: "Which colour is the logo?" });
  await turn({ reply: calls(call("call_logo", "desk__lookup", { query: "logo" })) });
  await turn({ reply: says("Teal."), message: "Delete the plan, please." });
  await turn({ reply: calls(call("call_wipe", "desk__wipe", {})) });
  await turn({ reply: says("I may not delete it."), message: "Ask the researcher about our competitors." });
  const delegating = await turn({ reply: calls(call("call_delegate", "delegate", { agent: "desk:researcher", task: "List the competitors of Project Heron." })) });
  const childConversation = delegating.envelope.tools?.delegated?.[0]?.childConversationId;
  expect(childConversation, "the delegate call started a subagent").toBeDefined();
  await client.completeDelegation(childConversation!, says("Kestrel Labs and Osprey AI."));
  await turn({});
  // Lookups grow the history past the small window's trigger: the turn that crosses it compacts first.
  let compacted: TurnResult | undefined;
  for (let i = 0; i < 12 && !compacted; i++) {
    await turn({ reply: says(`Noted (${i}).`), message: `What does the dossier say about item ${i}?` });
    const looked = await turn({ reply: calls(call(`call_${i}`, "desk__lookup", { query: `item ${i}` })) });
    compacted = turns.slice(-2).find((t) => t.envelope.compaction) ?? (looked.envelope.compaction ? looked : undefined);
  }
  expect(compacted, "a turn compacted on the small window").toBeDefined();
  // The model's real usage, as a frontend reports it with its reply.
  const last = await turn({ reply: says("That is the dossier."), message: "Thanks." });
  await client.appendMessages(conversation, [{ role: "assistant", content: "Glad to help." }], { promptTokens: last.usage.total + 11, completionTokens: 4, cachedTokens: 512, turnId: last.turnId });

  expect(turns.some((t) => t.envelope.hooks?.calls.some((c) => c.hook === "desk:spelling" && c.verdict === "rewrite"))).toBe(true);
  expect(turns.some((t) => t.envelope.tools?.ran?.some((r) => r.tool === "desk__wipe" && r.deniedBy === "guard"))).toBe(true);
  return { conversation, key: await apiKey(id), turns, docChanged, compacted: compacted!, childConversation: childConversation! };
}

describe.skipIf(ENGINES.length === 0)("the inspector", () => {
  // The conversation is scripted once; every engine reads the same one.
  let scripted: Scripted;
  const timings: Record<string, Timing> = {};

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    scripted = await script();
  }, 180_000);

  afterAll(() => {
    if (Object.keys(timings).length) writeFileSync(join(ARTIFACTS, "inspector-timing.json"), `${JSON.stringify(timings, null, 2)}\n`);
  });

  it("refuses a what-if it cannot run with a problem document: a policy the schema refuses, a turn there is not", async () => {
    const post = (turnId: string, body: unknown) =>
      fetch(`${runtimeUrl()}/v1/conversations/${scripted.conversation}/turns/${turnId}/what-if`, { method: "POST", headers: { Authorization: `Bearer ${scripted.key}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const refused = await post(scripted.docChanged.turnId, { compaction: { target: 0.9, trigger: 0.85 } });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("Content-Type")).toBe("application/problem+json");
    expect(await refused.json()).toMatchObject({ type: "urn:context-runtime:problem:invalid-request", issues: [{ path: "compaction.target", message: "target must be below trigger" }] });
    expect((await post(scripted.docChanged.turnId, { budget: 10 })).status).toBe(400);
    expect((await post("no-such-turn", {})).status).toBe(404);
  });

  describe.each(ENGINES)("in $title", (engine) => {
    const work = mkdtempSync(join(tmpdir(), `inspector-${engine.name}-`));
    let page: BrowserPage;
    const screenshot = async (name: string) => writeFileSync(join(ARTIFACTS, `${name}-${engine.name}.png`), await page.screenshot());

    beforeAll(async () => {
      page = await openPage(engine, work);
    }, 60_000);

    afterAll(async () => {
      await page?.close();
      rmSync(work, { recursive: true, force: true });
    });

    const turnHash = (turnId: string) => `#/c/${encodeURIComponent(scripted.conversation)}/t/${encodeURIComponent(turnId)}`;

    it("takes the key from the fragment, forgets it from the address, and lists the user's conversations, newest first", async () => {
      await page.navigate(`${runtimeUrl()}/inspect#key=${encodeURIComponent(scripted.key)}`);
      await page.until(`document.querySelector("#conversations [data-conversation]") !== null`);
      const listed = await page.eval<string[]>(`[...document.querySelectorAll("#conversations [data-conversation]")].map((r) => r.dataset.conversation)`);
      // The subagent's conversation started after the parent: newest first.
      expect(listed.indexOf(scripted.childConversation)).toBeLessThan(listed.indexOf(scripted.conversation));
      expect(listed).toContain(scripted.conversation);
      expect(await page.eval<string>("location.hash")).toBe("#/");
      expect(await page.eval<string | null>(`sessionStorage.getItem("context-runtime:inspector-key")`)).toBe(scripted.key);
      await screenshot("inspector-conversations");
    }, 60_000);

    it("shows the conversation's turns on a timeline: the hook's rewrite, the denied call, the compaction, the subagent linked", async () => {
      await page.navigate(`${runtimeUrl()}/inspect#/c/${encodeURIComponent(scripted.conversation)}`);
      await page.until(`document.body.dataset.state === "ready" && document.querySelector("#timeline") !== null`);
      const rows = await page.eval<number>(`document.querySelectorAll("#timeline [data-turn]").length`);
      expect(rows).toBe(scripted.turns.length);
      const text = await page.eval<string>(`document.querySelector("#timeline").textContent`);
      expect(text).toContain("desk:spelling rewrite");
      expect(text).toContain("desk__wipe denied by guard");
      expect(text).toMatch(/auto [\d,]+→[\d,]+/);
      // A context missing on every turn shows on every row, without opening a turn.
      const missingRows = await page.eval<number>(`[...document.querySelectorAll("#timeline [data-turn]")].filter((r) => r.textContent.includes("desk:calendar missing (error)")).length`);
      expect(missingRows).toBeGreaterThan(0);
      expect(await page.eval<string | null>(`document.querySelector('#subagents [data-child] a')?.getAttribute("href") ?? null`)).toBe(`#/c/${scripted.childConversation}`);
      await screenshot("inspector-conversation");
    }, 60_000);

    it("shows every block of a turn with the runtime's token count, and the diff names the context that changed", async () => {
      const turn = scripted.docChanged;
      await page.navigate(`${runtimeUrl()}/inspect${turnHash(turn.turnId)}`);
      await page.until(`document.body.dataset.state === "ready" && document.querySelector("#block-table") !== null`);
      const shown = await page.eval<{ block: string; tokens: string; text: string }[]>(
        `[...document.querySelectorAll("#block-table [data-block]")].map((r) => ({ block: r.dataset.block, tokens: r.dataset.tokens, text: r.children[1].textContent }))`,
      );
      const expected = turn.envelope.assembly.blocks.map((b) => ({ block: b.id ? `${b.kind}:${b.id}` : b.kind, tokens: String(b.tokens), text: b.tokens.toLocaleString("en-US") }));
      expect(shown).toEqual(expected);
      expect(expected.some((b) => b.block === "context:desk:doc")).toBe(true);
      // Each block says which version of its source the model read, and how far it is trusted.
      const doc = await page.eval<string[]>(`[...document.querySelector('#block-table [data-block="context:desk:doc"]').children].map((c) => c.textContent)`);
      expect(doc.slice(-2)).toEqual(["v2 · updated", "outside: an app's data, neutralised and redacted, fenced in the appendix"]);
      const position = scripted.turns.findIndex((t) => t.turnId === turn.turnId) + 1;
      expect(await page.eval<string>(`document.querySelector("h1").textContent`)).toMatch(new RegExp(`^Turn ${position} of \\d+$`));
      const changes = await page.eval<string>(`document.querySelector("#changes")?.textContent ?? ""`);
      expect(changes).toContain("context changed desk:doc (updated)");
      expect(changes).not.toContain("desk:profile");
      expect(await page.eval<string>(`document.querySelector("#left-out").textContent`)).toMatch(/desk:profile\s*omitted\s*unchanged/);
      // The missing context is one row, saying why: not an "omitted · missing" row beside it.
      const calendarRows = await page.eval<string[]>(`[...document.querySelectorAll('#left-out [data-omitted="desk:calendar"]')].map((r) => r.textContent)`);
      expect(calendarRows).toHaveLength(1);
      expect(calendarRows[0]).toContain("calendar is down for maintenance");
      await screenshot("inspector-turn");
    }, 60_000);

    it("names the compaction where the prefix broke, at the first divergent byte", async () => {
      const turn = scripted.compacted;
      await page.navigate(`${runtimeUrl()}/inspect${turnHash(turn.turnId)}`);
      await page.until(`document.body.dataset.state === "ready" && document.querySelector("#prefix") !== null`);
      expect(await page.eval<string>(`document.querySelector("#prefix").dataset.prefix`)).toBe("broken");
      const reasons = await page.eval<string>(`document.querySelector("#prefix-reasons").textContent`);
      expect(reasons).toContain("a compaction in this turn (auto)");
      // The byte the page names is where the two inputs, as the API gave them, part.
      const index = scripted.turns.findIndex((t) => t.turnId === turn.turnId);
      const [before, after] = await Promise.all([pastTurn(scripted, scripted.turns[index - 1]!.turnId), pastTurn(scripted, turn.turnId)]);
      // The tool list is read first: the first summary brought search_history into it.
      const [toolsBefore, toolsAfter] = [JSON.stringify(before.tools ?? []), JSON.stringify(after.tools ?? [])];
      expect(toolsAfter).not.toBe(toolsBefore);
      let at = 0;
      while (at < toolsBefore.length && toolsBefore[at] === toolsAfter[at]) at++;
      const byte = Buffer.byteLength(toolsAfter.slice(0, at));
      expect(await page.eval<string>(`document.querySelector("#prefix").textContent`)).toContain("in the tool list");
      expect(await page.eval<string>(`document.querySelector("#prefix").dataset.byte`)).toBe(String(byte));
      await screenshot("inspector-prefix-break");
    }, 60_000);

    it("re-assembles a turn under a smaller budget: fewer tokens, nothing stored", async () => {
      const turn = scripted.turns.at(-1)!;
      await page.navigate(`${runtimeUrl()}/inspect${turnHash(turn.turnId)}`);
      await page.until(`document.body.dataset.state === "ready" && document.querySelector("#whatif-form") !== null`);
      const eventsBefore = await eventCount(scripted);
      // Between what is never given up (system prompt, tools, the user's words) and the whole input.
      const budget = Math.floor((turn.usage.total + turn.usage.system + turn.usage.tools + turn.usage.message) / 2);
      await page.eval(`(() => { document.querySelector("#whatif-budget").value = "${budget}"; document.querySelector("#whatif-form").requestSubmit(); return true; })()`);
      await page.until(`document.querySelector("#whatif-result").dataset.state === "ready"`);
      const before = Number(await page.eval<string>(`document.querySelector("#whatif-result").dataset.before`));
      const after = Number(await page.eval<string>(`document.querySelector("#whatif-result").dataset.after`));
      expect(before).toBe(turn.usage.total);
      expect(after, await page.eval<string>(`document.querySelector("#whatif-result").textContent`)).toBeLessThanOrEqual(budget);
      expect(after).toBeLessThan(before);
      expect(await page.eval<string>(`document.querySelector("#whatif-summary").textContent`)).toContain("fits");
      expect(await eventCount(scripted)).toBe(eventsBefore);
      await screenshot("inspector-what-if");
    }, 60_000);

    it("shows the reported prompt and cached tokens beside the runtime's count", async () => {
      const turn = scripted.turns.at(-1)!;
      await page.navigate(`${runtimeUrl()}/inspect${turnHash(turn.turnId)}`);
      await page.until(`document.body.dataset.state === "ready" && document.querySelector("#usage-table") !== null`);
      const cells = await page.eval<string[]>(`[...document.querySelectorAll("#usage-table tbody td")].map((td) => td.textContent)`);
      expect(cells.slice(3)).toEqual([(turn.usage.total + 11).toLocaleString("en-US"), expect.stringMatching(/^512 \(\d+ %\)$/), turn.usage.total.toLocaleString("en-US"), expect.stringMatching(/^\+11 /)]);
    }, 60_000);

    it("asks for a key when it has none, and a refused key sends it back to the form", async () => {
      await page.eval(`sessionStorage.clear()`);
      await page.navigate(`${runtimeUrl()}/inspect#/`);
      await page.until(`document.querySelector("#key-form") !== null`);
      await page.eval(`(() => { document.querySelector("#key-input").value = "not-a-key"; document.querySelector("#key-form").requestSubmit(); return true; })()`);
      await page.until(`document.querySelector("#key-form p")?.textContent.includes("refused") === true`);
      expect(await page.eval<string | null>(`sessionStorage.getItem("context-runtime:inspector-key")`)).toBeNull();
    }, 60_000);

    it("reports the page's load times (the page's own navigation timing)", async () => {
      const list = await timeTo(page, `${runtimeUrl()}/inspect#key=${encodeURIComponent(scripted.key)}`, `document.querySelector("#conversations [data-conversation]") !== null`);
      const turn = await timeTo(page, `${runtimeUrl()}/inspect${turnHash(scripted.docChanged.turnId)}`, `document.body.dataset.state === "ready" && document.querySelector("#block-table") !== null`);
      timings[engine.name] = { conversationsList: list, turnView: turn };
      console.log(`inspector timing in ${engine.name}: conversations list ${JSON.stringify(list)}, turn view ${JSON.stringify(turn)}`);
      expect(list.domContentLoadedMs).toBeGreaterThan(0);
      expect(list.readyMs).toBeGreaterThanOrEqual(list.domContentLoadedMs);
    }, 60_000);
  });
});

async function pastTurn(s: Scripted, turnId: string): Promise<PastTurn> {
  const response = await fetch(`${runtimeUrl()}/v1/conversations/${s.conversation}/turns/${turnId}`, { headers: { Authorization: `Bearer ${s.key}` } });
  return (await response.json()) as PastTurn;
}

async function eventCount(s: Scripted): Promise<number> {
  const response = await fetch(`${runtimeUrl()}/v1/conversations/${s.conversation}/events?limit=500`, { headers: { Authorization: `Bearer ${s.key}` } });
  return ((await response.json()) as { events: unknown[] }).events.length;
}

interface Timing {
  conversationsList: LoadTime;
  turnView: LoadTime;
}
interface LoadTime {
  domContentLoadedMs: number;
  readyMs: number;
}

/** Loads `url` and waits for `condition`; then, from navigation start on the page's own clock: DOMContentLoaded, and now. */
async function timeTo(page: BrowserPage, url: string, condition: string): Promise<LoadTime> {
  await page.navigate(url);
  await page.until(condition);
  const [domContentLoaded, ready] = await page.eval<[number, number]>(`[performance.getEntriesByType("navigation")[0].domContentLoadedEventStart, performance.now()]`);
  return { domContentLoadedMs: Math.round(domContentLoaded), readyMs: Math.round(ready) };
}
