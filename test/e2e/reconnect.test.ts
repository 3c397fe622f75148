/**
 * Connections that come and go, end to end: an app whose network drops and comes
 * back, session resources pushed over the real socket, and the close handshake.
 */
import { describe, expect, it } from "vitest";
import { ContextAppError, ErrorCode, type ContextProvider, type TurnResult } from "../../src/sdk";
import { APP_SUBPROTOCOL, BEARER_SUBPROTOCOL_PREFIX, PROTOCOL_VERSION } from "../../src/protocol/methods";
import {
  appToken,
  createApp,
  freshIdentity,
  frontend,
  Network,
  nextEvent,
  record,
  reminder,
  reminderOf,
  runtimeUrl,
  startApp,
  type Identity,
} from "./support";

/** A one-provider editor whose state the test changes at will. */
function editorContexts(editor: { open: string; line: number }): ContextProvider[] {
  return [
    {
      id: "editor-state",
      name: "Editor State",
      description: "The open note and the cursor",
      getCurrent: () => ({ title: "Editor State", content: `Open note: ${editor.open}\nCursor: line ${editor.line}` }),
    },
  ];
}

const ASSISTANT = {
  agentId: "assistant",
  name: "Notes Assistant",
  systemPrompt: "You are the Notes Assistant.",
  attachedContexts: ["notes:editor-state"],
};

/** Takes a turn and appends a reply, as a chat frontend would. */
async function converse(id: Identity, conversation: string, agent: string, message: string): Promise<TurnResult> {
  const client = await frontend(id);
  const turn = await client.turn(conversation, { agent, message });
  await client.appendMessages(conversation, [{ role: "assistant", content: `re: ${message}` }]);
  return turn;
}

describe("an app whose network drops", () => {
  it("is reported missing (not removed) while away, reconnects by itself with its agents, and the next turn shows what changed", async () => {
    const id = freshIdentity();
    const editor = { open: "q4-plan", line: 1 };
    const network = new Network();
    const app = createApp(id, { name: "notes", token: await appToken(id, "notes"), contexts: editorContexts(editor), WebSocket: network.WebSocket });
    const registrations = record(app, "registered");
    const disconnects = record(app, "disconnected");
    await app.connect();
    const { agentId: agent } = await app.createAgent(ASSISTANT);
    expect(registrations).toHaveLength(1);

    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });
    const first = await converse(id, conversation, agent, "Where am I?");
    expect(reminderOf(first)).toBe(reminder("[Context: Editor State]\nOpen note: q4-plan\nCursor: line 1"));

    // The network drops; the app keeps trying (each attempt fails) while the user goes on.
    const disconnected = nextEvent(app, "disconnected");
    const failedAttempts = record(app, "error");
    await network.cut();
    await disconnected;
    expect(disconnects).toHaveLength(1);
    const { providers: whileAway } = await client.providers();
    expect(whileAway.map((p) => [p.id, p.online])).toEqual([["notes:editor-state", false]]);

    editor.line = 9; // the user moves on in the editor while the runtime cannot see it
    const away = await converse(id, conversation, agent, "Still there?");
    expect(away.missing).toEqual([{ id: "notes:editor-state", reason: "offline", detail: expect.any(String), severity: "warning" }]);
    // The model keeps what it last saw: no marker at all, in particular no removal.
    expect(reminderOf(away)).toBe("");
    expect(String(away.messages.at(-1)!.content)).not.toContain("[Context removed");
    expect(away.envelope.selection.removed).toEqual([]);
    expect(away.envelope.selection.omitted).toEqual([{ id: "notes:editor-state", reason: "missing" }]);

    // Each failed attempt reports an error; wait (one at a time) until it has retried at least twice.
    while (failedAttempts.length < 2) await nextEvent(app, "error");
    const attemptsWhileAway = network.attempts;
    expect(attemptsWhileAway).toBeGreaterThanOrEqual(3); // the first connection, then the retries
    expect(registrations).toHaveLength(1); // none of them got through

    // The network comes back: no call to connect(), the SDK returns and re-registers on its own.
    const reregistered = nextEvent(app, "registered");
    network.restore();
    const second = await reregistered;
    expect(network.attempts).toBeGreaterThan(attemptsWhileAway);
    expect(registrations).toHaveLength(2);
    expect(second.sessionId).not.toBe(registrations[0]!.sessionId);

    // initialize replaces the app's registrations, so the agent exists only because the SDK re-sent it.
    const { agents } = await client.agents();
    expect(agents.map((a) => [a.id, a.attachedContexts])).toEqual([["notes:assistant", ["notes:editor-state"]]]);
    const { providers: back } = await client.providers();
    expect(back.map((p) => [p.id, p.online])).toEqual([["notes:editor-state", true]]);

    const returned = await converse(id, conversation, agent, "And now?");
    expect(returned.missing).toEqual([]);
    expect(reminderOf(returned)).toBe(reminder("[Context updated: Editor State]\nOpen note: q4-plan\nCursor: line 9"));
    expect(returned.envelope.selection.selected).toEqual([{ id: "notes:editor-state", reason: "updated" }]);

    const settled = await converse(id, conversation, agent, "Thanks.");
    expect(reminderOf(settled)).toBe("");
  });
});

describe("session resources pushed over the socket", () => {
  it("refuses an app the agent does not name, replaces on the same id, and tells the app when the user removes it", async () => {
    const id = freshIdentity();
    const editor = { open: "q4-plan", line: 1 };
    const notes = await startApp(id, { name: "notes", contexts: editorContexts(editor) });
    const intruder = await startApp(id, { name: "intruder" });
    const { agentId: agent } = await notes.createAgent(ASSISTANT);
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });
    const notesRemovals = record(notes, "resourceRemoved");
    const intruderRemovals = record(intruder, "resourceRemoved");

    const refused = intruder.pushResource({ conversationId: conversation, id: "draft", title: "Sneaky", content: "read me" });
    await expect(refused).rejects.toBeInstanceOf(ContextAppError);
    await expect(refused).rejects.toMatchObject({
      code: ErrorCode.Forbidden,
      message: expect.stringMatching(/'intruder'.*attachedContexts/),
    });
    expect((await client.resources(conversation)).resources).toEqual([]);

    const pushed = await notes.pushResource({ conversationId: conversation, id: "draft", title: "Draft reply", content: "Dear team, v1" });
    expect(pushed).toEqual({ fullId: "notes:draft", conversationId: conversation });
    const first = await converse(id, conversation, agent, "Look at my draft.");
    expect(reminderOf(first)).toBe(
      reminder("[Context: Editor State]\nOpen note: q4-plan\nCursor: line 1", "[Resource: Draft reply]\nDear team, v1"),
    );
    expect(reminderOf(first)).not.toContain("Sneaky");

    const again = await notes.pushResource({ conversationId: conversation, id: "draft", title: "Draft reply", content: "Dear team, v2" });
    expect(again).toEqual(pushed);
    const { resources } = await client.resources(conversation);
    expect(resources).toEqual([expect.objectContaining({ fullId: "notes:draft", app: "notes", title: "Draft reply" })]);
    const updated = await converse(id, conversation, agent, "I changed it.");
    expect(reminderOf(updated)).toBe(reminder("[Resource updated: Draft reply]\nDear team, v2"));

    const removed = nextEvent(notes, "resourceRemoved");
    await client.removeResource(conversation, "notes:draft");
    expect(await removed).toEqual({ fullId: "notes:draft", conversationId: conversation });
    expect(notesRemovals).toEqual([{ fullId: "notes:draft", conversationId: conversation }]);
    expect(intruderRemovals).toEqual([]);
    expect((await client.resources(conversation)).resources).toEqual([]);
    const gone = await converse(id, conversation, agent, "Forget the draft.");
    expect(reminderOf(gone)).toBe(reminder("[Resource removed: notes:draft]"));
  });
});

describe("the close handshake", () => {
  it("answers an app's close(1000) with its own close frame, so the close is clean", async () => {
    const id = freshIdentity();
    const token = await appToken(id, "raw");
    const url = `${runtimeUrl().replace(/^http/, "ws")}/v1/apps/connect`;
    const socket = new WebSocket(url, [APP_SUBPROTOCOL, `${BEARER_SUBPROTOCOL_PREFIX}${token}`]);
    const closed = within(10_000, "no close event within 10 s of close(1000): the runtime did not complete the handshake", (resolve) =>
      socket.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason, wasClean: event.wasClean })),
    );
    const frames: string[] = [];
    socket.addEventListener("message", (event) => frames.push(String(event.data)));

    await within(10_000, "the socket did not open within 10 s", (resolve, reject) => {
      socket.addEventListener("open", () => resolve(undefined));
      socket.addEventListener("error", () => reject(new Error("the socket failed before it opened")));
    });
    expect(socket.protocol).toBe(APP_SUBPROTOCOL);

    // A real session first, so the close ends something the runtime tracks.
    const answered = within(10_000, "no answer to initialize within 10 s", (resolve) =>
      socket.addEventListener("message", (event) => resolve(JSON.parse(String(event.data)))),
    );
    socket.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: PROTOCOL_VERSION, app: { name: "raw", version: "1.0.0" }, contexts: [{ id: "state", name: "State", methods: ["current"] }] },
      }),
    );
    expect(await answered).toMatchObject({ jsonrpc: "2.0", id: 1, result: { protocolVersion: PROTOCOL_VERSION, sessionId: expect.any(String) } });
    const client = await frontend(id);
    expect((await client.providers()).providers.map((p) => [p.id, p.online])).toEqual([["raw:state", true]]);

    socket.close(1000, "done");
    expect(await closed).toEqual({ code: 1000, reason: "done", wasClean: true });
    expect(frames).toHaveLength(1);
    expect((await client.providers()).providers.map((p) => [p.id, p.online])).toEqual([["raw:state", false]]);
  });
});

/** A promise settled by `start`, or rejected with `message` if nothing happens in `ms` (a guard against hanging, not a measurement). */
function within<T>(ms: number, message: string, start: (resolve: (value: T) => void, reject: (error: Error) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    start(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
