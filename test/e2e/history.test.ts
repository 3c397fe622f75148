/**
 * The context-manager contract end to end: a frontend resumes a long history
 * into a real `wrangler dev`, asks whether to compact, compacts, reads what the
 * model would read, and clears it, all through the project's SDK.
 */
import { describe, expect, it } from "vitest";
import { pairingProblems } from "../../src/core/groups";
import { textOf } from "../../src/protocol/messages";
import { ContextRuntimeError } from "../../src/sdk";
import { freshIdentity, frontend, startApp } from "./support";

const history = (groups: number) =>
  Array.from({ length: groups }, (_, i) => [
    { role: "user" as const, content: i === 3 ? `Actually, call the release "Aurora ${i}" — not "Borealis".` : `Question ${i}: what changed in module ${i}?` },
    { role: "assistant" as const, content: null, tool_calls: [{ id: `h${i}`, type: "function" as const, function: { name: "search", arguments: `{"module":${i}}` } }] },
    { role: "tool" as const, tool_call_id: `h${i}`, content: `module ${i} in src/module-${i}.ts\n` + `row ${i}: parser updated\n`.repeat(20) },
    { role: "assistant" as const, content: `Module ${i} changed its parser.` },
  ]).flat();

describe("history through the SDK", () => {
  it("resumes, reports, compacts, serves the view and clears it, leaving stored messages as they were", async () => {
    const id = freshIdentity();
    const app = await startApp(id, { name: "history" });
    const { agentId: agent } = await app.createAgent({ agentId: "keeper", name: "Keeper", systemPrompt: "You keep long conversations.", tools: ["search"] });
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent, compaction: { contextWindow: 8_192, outputReserve: 1_024, keepToolResults: 100 } });

    expect(await client.setMessages(conversation, history(40))).toMatchObject({ appended: 160, lastSeq: 160 });
    const stored = await client.messages(conversation);
    const status = await client.compactionStatus(conversation);
    expect(status).toMatchObject({ messageCount: 160, shouldCompact: true, limits: { usable: 7_168 } });

    const { compaction } = await client.compact(conversation);
    expect(compaction!.summary!.coverage.throughSeq).toBeGreaterThan(16);
    expect(compaction!.tokens.after).toBeLessThanOrEqual(compaction!.tokens.target!);
    expect((await client.compactionStatus(conversation)).shouldCompact).toBe(false);

    const view = await client.requestMessages(conversation);
    expect(pairingProblems(view.messages)).toEqual([]);
    const summary = view.messages.map(textOf).find((t) => t.startsWith("<summary_fence"))!;
    expect(summary).toContain('"Aurora 3"');
    expect(summary).toContain('"Borealis"');

    const turn = await client.turn(conversation, { agent, message: "What did we call the release?" });
    expect(turn.usage.total).toBeLessThanOrEqual(7_168);
    expect(turn.messages.map(textOf).some((t) => t.includes("Aurora 3"))).toBe(true);

    await client.clearHistory(conversation);
    expect((await client.requestMessages(conversation)).messages.map((m) => m.role)).toEqual(["system"]);
    expect((await client.messages(conversation)).messages.slice(0, 160)).toEqual(stored.messages);

    const refused = await client.setMessages(conversation, history(1)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ContextRuntimeError);
    expect((refused as ContextRuntimeError).status).toBe(409);
  });

  it("holds a tool call for the user's approval and gives the model their denial", async () => {
    const id = freshIdentity();
    const app = await startApp(id, { name: "files" });
    const { agentId: agent } = await app.createAgent({ agentId: "tidy", name: "Tidy", systemPrompt: "You tidy files.", tools: ["delete_file"] });
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });
    await client.turn(conversation, { agent, message: "Tidy up my drafts." });
    await client.appendMessages(conversation, [{ role: "assistant", content: null, tool_calls: [{ id: "del", type: "function", function: { name: "delete_file", arguments: '{"path":"drafts/"}' } }] }]);

    expect((await client.requestApproval(conversation, "del")).approval).toMatchObject({ toolCallId: "del", tool: "delete_file", state: "requested" });
    expect((await client.approvals(conversation)).approvals.map((a) => a.toolCallId)).toEqual(["del"]);
    const early = await client.appendMessages(conversation, [{ role: "tool", tool_call_id: "del", content: "deleted" }]).catch((error: unknown) => error);
    expect((early as ContextRuntimeError).status).toBe(409);

    const turn = await client.turn(conversation, { agent, approvals: [{ toolCallId: "del", approved: false, reason: "Keep the drafts." }] });
    expect(pairingProblems(turn.messages)).toEqual([]);
    expect(textOf(turn.messages.at(-1)!)).toContain("the user denied this tool call] Their reason: Keep the drafts.");
    expect((await client.approvals(conversation)).approvals).toEqual([]);
  });
});
