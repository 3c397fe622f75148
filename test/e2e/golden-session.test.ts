/**
 * A byte-for-byte guard of the model input: a scripted 30-turn session through a real `wrangler dev` (contexts that
 * change, stay, go empty and go missing; tools the runtime runs, the frontend's own, results appended; compaction;
 * a subagent; input and assembled hooks; memory), whose every turn's `messages` and `tools` must equal, once the
 * values that differ per run are replaced by placeholders, test/fixtures/golden/thirty-turns.json.
 *
 * A change to src/ that changes what the model reads fails here. If the change is meant, regenerate the golden with
 * `npx vitest run --project e2e test/e2e/golden-session.test.ts -u` and review its diff like code.
 */
import { describe, expect, it } from "vitest";
import type { ContextProvider, TurnResult } from "../../src/sdk";
import { apiKey, freshIdentity, frontend, runtimeUrl, startApp, type Identity } from "./support";

const GOLDEN = "../fixtures/golden/thirty-turns.json";

/**
 * Compaction on chosen turns only. Where a compaction happens and what it covers are decided on token counts, and the
 * runtime's nonces (and, in stubs, the conversation's id) are random text whose count differs a little from run to
 * run: on a window the history crosses slowly, the turn and the cut move between runs. So the conversation's own
 * window never triggers, and the turns that compact name a small window (`budget.contextWindow`) far below what the
 * history holds by then, with the lowest target and no token tail: each summarises every group but the two newest.
 */
const WIDE = { contextWindow: 100_000, target: 0.3, tailGroups: 2, tailTokens: 0, keepToolResults: 1 };
const NARROW = { contextWindow: 2_048, outputReserve: 256 };

type Reply = NonNullable<Parameters<Awaited<ReturnType<typeof frontend>>["turn"]>[1]["reply"]>;

const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, type: "function" as const, function: { name, arguments: JSON.stringify(args) } });
const calls = (...toolCalls: ReturnType<typeof call>[]): Reply => ({ role: "assistant", content: null, tool_calls: toolCalls });
const says = (content: string): Reply => ({ role: "assistant", content });

/** What the `lookup` tool knows: long enough that a few results and thirty turns pass a 4,096-token window. */
function lookup(query: string): string {
  const facts = [
    `Launch dossier entry for "${query}".`,
    "The launch of Project Heron is planned for 14 March at the Lisbon office, with a press call at 10:00 WET.",
    "Budget line 7 (events) holds EUR 18,400; line 9 (travel) holds EUR 6,250 after the February revision.",
    "Owners: Ana Ribeiro (product), Tomás Vidal (engineering), Priya Nair (marketing).",
    "Open risks: the payment provider's sandbox certificate expires on 2 March; the Portuguese translation is at 80 %.",
    "Decision log: the logo stays teal (#1E8C93); the tagline is 'Context, kept.'; no launch video this quarter.",
  ];
  return facts.join("\n");
}

/** The desk app: a document that is edited mid-session, a profile that never changes, a cart that empties and fails once. */
async function deskApp(id: Identity) {
  const doc = { version: "v1", body: "Project Heron launch plan.\nIntro: we launch in spring.\nSections: dates, budget, owners." };
  const cart = { mode: "items" as "items" | "empty" | "broken", items: ["badge printer", "lanyards ×200"] };
  const ran: string[] = [];
  const contexts: ContextProvider[] = [
    {
      id: "doc",
      name: "Document",
      description: "The document open in the editor",
      getCurrent: () => ({ title: "Launch plan", content: doc.body, version: doc.version }),
    },
    {
      id: "profile",
      name: "Profile",
      description: "Who the user is",
      getCurrent: () => ({ title: "Profile", content: "Name: Ana Ribeiro\nRole: product lead\nTime zone: Europe/Lisbon" }),
    },
    {
      id: "cart",
      name: "Cart",
      description: "The event supplies cart",
      getCurrent: () => {
        if (cart.mode === "broken") throw new Error("cart service unavailable");
        if (cart.mode === "empty") return null;
        return { title: "Supplies cart", content: cart.items.map((i) => `- ${i}`).join("\n") };
      },
    },
  ];
  const app = await startApp(id, {
    name: "desk",
    contexts,
    tools: [
      {
        name: "lookup",
        description: "Look up facts about the launch in the team's dossier.",
        inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
        annotations: { readOnlyHint: true },
        handler: ({ query }) => {
          ran.push(`lookup ${String(query)}`);
          return lookup(String(query));
        },
      },
      {
        name: "word_count",
        description: "Count the words of the open document.",
        inputSchema: { type: "object", properties: {} },
        handler: () => {
          ran.push("word_count");
          return `${doc.body.split(/\s+/).length} words`;
        },
      },
    ],
    hooks: [
      // Rewrites the user's message: the house spells "color".
      { name: "spelling", point: "input", handler: ({ message }) => (message.includes("colour") ? { action: "rewrite", message: message.replaceAll("colour", "color") } : undefined) },
      // Adds a note whenever the document is about to be injected again.
      {
        name: "doc-note",
        point: "assembled",
        handler: ({ blocks }) =>
          blocks.some((b) => b.id === "desk:doc") ? { action: "change", add: [{ title: "Editor note", content: "The document was edited since you last read it: quote the new text." }] } : undefined,
      },
    ],
  });
  await app.createAgent({
    agentId: "researcher",
    name: "Researcher",
    description: "Finds facts about competitors and markets.",
    systemPrompt: "You are the Researcher. Answer with facts and their sources.",
    attachedContexts: ["desk:profile"],
    tools: ["lookup"],
  });
  const { agentId } = await app.createAgent({
    agentId: "writer",
    name: "Launch Writer",
    systemPrompt: "You are the Launch Writer. You help the user write the launch plan.",
    attachedContexts: ["desk:doc", "desk:profile", "desk:cart"],
    tools: ["lookup", "word_count"],
    memory: true,
    subagents: ["researcher"],
  });
  return { agent: agentId, doc, cart, ran };
}

async function remember(id: Identity, text: string): Promise<void> {
  const response = await fetch(`${runtimeUrl()}/v1/memories`, {
    method: "POST",
    headers: { Authorization: `Bearer ${await apiKey(id)}`, "Content-Type": "application/json" },
    body: JSON.stringify({ text, trust: "curated", source: "settings" }),
  });
  expect(response.status).toBe(201);
}

interface Step {
  step: string;
  messages: TurnResult["messages"];
  tools?: TurnResult["tools"];
}

/**
 * Replaces what differs from run to run by placeholders and keeps every other byte: the tenant, conversation and
 * turn ids (numbered in order of appearance), each conversation's nonce, the day and part of day in the identity
 * block, today's date in memory headers, and the `[written …]` age headers a run across midnight would add.
 */
function normalise(steps: Step[], known: { tenant: string; ids: Map<string, string> }): string {
  let text = JSON.stringify(steps, null, 2);
  const nonces = [...new Set([...text.matchAll(/nonce=\\"([a-z0-9]{12})\\"/g)].map((m) => m[1]!))];
  nonces.forEach((nonce, i) => (text = text.replaceAll(nonce, `<nonce-${i + 1}>`)));
  for (const [value, placeholder] of known.ids) text = text.replaceAll(value, placeholder);
  text = text.replaceAll(known.tenant, "<tenant>");
  text = text.replace(/This conversation started on [A-Za-z]+, \d{4}-\d{2}-\d{2}, in the [a-z]+ \(UTC\)\./g, "This conversation started on <weekday>, <date>, in the <part of day> (UTC).");
  text = text.replace(/- \(\d{4}-\d{2}-\d{2}(, confirmed \d{4}-\d{2}-\d{2})?; /g, "- (<date>; ");
  text = text.replace(/\[written (yesterday|\d+ days ago)\]\\n/g, "");
  return `${text}\n`;
}

describe("the model input of a 30-turn session", () => {
  it("is byte for byte the golden file's, once per-run values are placeholders", { timeout: 120_000 }, async () => {
    const id = freshIdentity();
    const { agent, doc, cart, ran } = await deskApp(id);
    await remember(id, "The user wants British spelling in every launch document they write.");
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent, compaction: WIDE });

    const steps: Step[] = [];
    const ids = new Map<string, string>([[conversation, "<conversation>"]]);
    const results: TurnResult[] = [];
    const record = (step: string, result: TurnResult) => {
      if (!ids.has(result.turnId)) ids.set(result.turnId, `<turn-${ids.size}>`);
      steps.push({ step, messages: result.messages, ...(result.tools ? { tools: result.tools } : {}) });
    };
    async function turn(step: string, body: Omit<Parameters<typeof client.turn>[1], "agent">): Promise<TurnResult> {
      const result = await client.turn(conversation, { agent, ...body });
      results.push(result);
      record(`${String(results.length).padStart(2, "0")} ${step}`, result);
      return result;
    }

    await turn("first message: every context injected, memory recalled", { message: "Hello! Let's work on the launch document today." });
    await turn("nothing changed", { reply: says("Happy to help with the launch plan."), message: "What is in my cart right now?" });
    await turn("the model asks for a tool", { reply: says("Badge printer and 200 lanyards."), message: "When is the launch?" });
    await turn("reply with an app tool call: the runtime runs lookup", { reply: calls(call("call_date", "desk__lookup", { query: "launch date" })) });
    await turn("input hook rewrites colour to color", { reply: says("The launch is on 14 March in Lisbon."), message: "Which colour is the logo?" });
    doc.version = "v2";
    doc.body = "Project Heron launch plan.\nIntro: we launch on 14 March in Lisbon.\nSections: dates, budget, owners.";
    await turn("document updated: injected again, assembled hook adds a note", { reply: says("The logo stays teal."), message: "I rewrote the intro; please read it." });
    cart.mode = "empty";
    await turn("cart empty", { reply: says("The intro now names the date."), message: "I emptied the cart." });
    cart.mode = "broken";
    await turn("cart provider fails: missing", { reply: says("Noted, the cart is empty."), message: "Is the cart still empty?" });
    cart.mode = "items";
    cart.items = ["stage banner"];
    await turn("cart back with other items", { reply: says("I cannot see the cart right now."), message: "I added a banner to the cart." });
    await turn("a question for two tools", { reply: says("The banner is in the cart."), message: "How long is the document, and show me a preview." });
    await turn("reply with an app tool and the frontend's own tool, its result in toolResults", {
      reply: calls(call("call_count", "desk__word_count", {}), call("call_preview", "show_preview", { section: "intro" })),
      toolResults: [{ tool_call_id: "call_preview", content: "Preview shown to the user: the intro section, 1 paragraph." }],
    });
    await turn("a question about the budget", { reply: says("The document has 17 words; the preview is on screen."), message: "What is the events budget?" });
    await client.appendMessages(conversation, [
      { role: "assistant", content: null, tool_calls: [call("call_budget", "desk__lookup", { query: "budget" })] },
      { role: "tool", tool_call_id: "call_budget", content: lookup("budget") },
    ]);
    await turn("bare continuation after a call and result appended with POST messages", {});
    await turn("ask to delegate", { reply: says("Events hold EUR 18,400."), message: "Ask the researcher who our competitors are." });

    const delegating = await turn("reply with a delegate call: the subagent starts", {
      reply: calls(call("call_delegate", "delegate", { agent: "desk:researcher", task: "List the main competitors of Project Heron.", context: "The launch is on 14 March." })),
    });
    const [delegated] = delegating.envelope.tools?.delegated ?? [];
    expect(delegated).toMatchObject({ toolCallId: "call_delegate", agent: "desk:researcher", depth: 1 });
    ids.set(delegated!.childConversationId, "<child-conversation>");
    record("15a the subagent's first input", await client.pastTurn(delegated!.childConversationId, delegated!.turnId));
    await client.completeDelegation(delegated!.childConversationId, says("Competitors: Kestrel Labs and Osprey AI, both launched in 2025."));
    await turn("continuation reads the subagent's answer", {});

    // Turns 17 to 30: the conversation grows past the window's trigger and compacts.
    await turn("lookups grow the history", { reply: says("Kestrel Labs and Osprey AI."), message: "Who owns engineering?" });
    await turn("reply with a lookup", { reply: calls(call("call_owners", "desk__lookup", { query: "owners" })) });
    await turn("a question about risks", { reply: says("Tomás Vidal owns engineering."), message: "What are the open risks?" });
    await turn("reply with a lookup", { reply: calls(call("call_risks", "desk__lookup", { query: "risks" })) });
    doc.version = "v3";
    doc.body = `${doc.body}\nRisks: certificate expiry on 2 March; translation at 80 %.`;
    await turn("document updated again", { reply: says("Two risks: the certificate and the translation."), message: "I added the risks section." });
    await turn("a narrow window: the first summary, search_history offered", { reply: says("The risks section reads well."), message: "What did we decide about the launch video?", budget: NARROW });
    await turn("reply with a lookup", { reply: calls(call("call_decisions", "desk__lookup", { query: "decisions" })) });
    await turn("memory-relevant message", { reply: says("No launch video this quarter."), message: "Remember how I want the spelling in this launch document?" });
    await turn("a question about travel", { reply: says("British spelling, as you asked."), message: "How much is left for travel?" });
    await turn("reply with a lookup", { reply: calls(call("call_travel", "desk__lookup", { query: "travel budget" })) });
    await turn("a question about the press call", { reply: says("EUR 6,250 for travel."), message: "When is the press call?" });
    await turn("reply with a lookup", { reply: calls(call("call_press", "desk__lookup", { query: "press call" })) });
    await turn("a narrow window again: the summary updated; colour through the input hook", { reply: says("At 10:00 WET."), message: "Does the colour of the slides match the logo?", budget: NARROW });
    await turn("last message", { reply: says("Yes, teal throughout."), message: "Thanks, that is all for today." });

    expect(results).toHaveLength(30);
    // What the script means to exercise did happen (the golden holds how).
    expect(ran.filter((r) => r.startsWith("lookup")).length).toBeGreaterThanOrEqual(6);
    expect(ran).toContain("word_count");
    expect(results.some((r) => r.envelope.compaction?.summary)).toBe(true);
    expect(results.some((r) => r.missing.some((m) => m.id === "desk:cart"))).toBe(true);
    expect(results.some((r) => r.envelope.hooks?.calls.some((c) => c.hook === "desk:spelling" && c.verdict === "rewrite"))).toBe(true);
    expect(results.some((r) => r.envelope.hooks?.calls.some((c) => c.hook === "desk:doc-note" && c.verdict === "change"))).toBe(true);

    const normalised = normalise(steps, { tenant: id.tenant, ids });
    // Nothing per-run may be left: a new kind of id in the input needs a placeholder above.
    expect(normalised).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
    await expect(normalised).toMatchFileSnapshot(GOLDEN);
  });
});
