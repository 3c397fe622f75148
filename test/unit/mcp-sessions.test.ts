/**
 * MCP sessions' bookkeeping in Node over node:sqlite (src/conversation/mcp-sessions.ts, mcp-session-store.ts): each
 * session keeps its own last events whatever its neighbours send, and a session idle for a day ends at the alarm.
 */
import { describe, expect, it } from "vitest";
import { MCP_SESSION_IDLE_MS, McpSessions } from "../../src/conversation/mcp-sessions";
import type { McpSession } from "../../src/conversation/mcp-session-store";
import { fakeConversation } from "./support/fake-scope";

const session = (sessionId: string, createdAt: string): McpSession => ({ sessionId, agent: "notes:assistant", protocolVersion: "2025-11-25", client: { name: "t", version: "1" }, createdAt });

describe("a session's stream events", () => {
  it("keeps each session's last events, however many its neighbours store", async () => {
    const { db } = await fakeConversation();
    for (let i = 0; i < 40; i++) {
      db.mcpEvents.add("a", "_GET_stream", `{"n":${i}}`, 64);
      db.mcpEvents.add("b", "_GET_stream", `{"n":${i}}`, 64);
    }
    expect(db.mcpEvents.after("a", "_GET_stream", 0)).toHaveLength(40);
    for (let i = 40; i < 70; i++) db.mcpEvents.add("a", "_GET_stream", `{"n":${i}}`, 64);
    const kept = db.mcpEvents.after("a", "_GET_stream", 0);
    expect(kept).toHaveLength(64);
    expect(kept[0]!.message).toBe('{"n":6}');
    expect(db.mcpEvents.after("b", "_GET_stream", 0)).toHaveLength(40);
  });

  it("hands over what was held while no stream was open, once", async () => {
    const { db } = await fakeConversation();
    db.mcpEvents.add("a", "_GET_stream", "sent", 64);
    db.mcpEvents.add("a", "_GET_stream", "held", 64, true);
    expect(db.mcpEvents.takeHeld("a").map((e) => e.message)).toEqual(["held"]);
    expect(db.mcpEvents.takeHeld("a")).toEqual([]);
  });
});

describe("idle sessions", () => {
  it("end at the alarm a day after their last use, stop being watched, and the alarm moves to the next", async () => {
    const conversation = await fakeConversation({ start: new Date("2025-03-03T09:00:00.000Z") });
    const { db, apps } = conversation;
    db.mcp.add(session("c-1.old", "2025-03-01T08:00:00.000Z"));
    db.mcp.subscribe({ sessionId: "c-1.old", uri: "ctx://notes/editor", ref: "notes:editor", version: null });
    db.mcp.add(session("c-1.recent", "2025-03-02T20:00:00.000Z"));
    const alarms: Date[] = [];
    const sessions = new McpSessions(async (at) => void alarms.push(at));
    await sessions.expire(conversation.scope());
    expect(db.mcp.list().map((s) => s.sessionId)).toEqual(["c-1.recent"]);
    expect(apps.callsTo("watchContext")).toEqual([["c-1", "notes:editor", false]]);
    expect(db.events.page(0, 10).map((e) => [e.type, e.data])).toEqual([["mcp.session.ended", { by: "idle" }]]);
    expect(alarms).toEqual([new Date(Date.parse("2025-03-02T20:00:00.000Z") + MCP_SESSION_IDLE_MS)]);
  });
});
