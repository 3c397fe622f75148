/**
 * The runtime as an MCP server, as an MCP client sees it (docs/mcp.md): the official SDK's `Client` opens a session
 * on the notes assistant's view, lists and reads its contexts as resources, subscribes to the editor state and is told
 * when it changes, calls the `search` tool (run on the notes app) and gets the `weekly-review` skill as a prompt.
 * Start the runtime first (`npm run dev`), then `npm run example:mcp`. Nothing leaves this machine.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { devCredentials } from "./credentials";
import { createNotesApp } from "./notes-app";

const { url, apiKey, appTokens } = devCredentials();
const notes = createNotesApp({ url, token: appTokens.notes! });
await notes.start();

const endpoint = new URL("/mcp/notes/assistant", url);
const transport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } });
const client = new Client({ name: "example-mcp-client", version: "1.0.0" });
await client.connect(transport);
console.log(`session ${transport.sessionId} at ${endpoint.href}, protocol ${transport.protocolVersion}`);

const { resources } = await client.listResources();
console.log(`\nresources/list → ${resources.map((r) => r.uri).join(", ")}`);
const editorUri = "ctx://notes/editor-state";
const show = async (uri: string) => {
  const { contents } = await client.readResource({ uri });
  console.log(`resources/read ${uri}\n${String((contents[0] as { text: string }).text).replace(/^/gm, "  │ ")}`);
};
await show(editorUri);

let updated: () => void = () => undefined;
const told = new Promise<void>((resolve) => (updated = resolve));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
  console.log(`\nnotifications/resources/updated ← ${n.params.uri}`);
  updated();
});
await client.subscribeResource({ uri: editorUri });
console.log(`\nresources/subscribe ${editorUri}; the user moves the cursor and selects a line, and the app says so`);
// The session's stream (GET) opens just after initialize; a moment for it before the first change is told on it.
await new Promise((resolve) => setTimeout(resolve, 300));
notes.editor.moveCursor(3);
notes.editor.select("Write the protocol doc.");
notes.app.notifyChanged("editor-state");
await told;
await show(editorUri);

const { tools } = await client.listTools();
console.log(`\ntools/list → ${tools.map((t) => t.name).join(", ")}`);
const found = await client.callTool({ name: "notes__search", arguments: { query: "latency" } });
console.log(`tools/call notes__search {"query":"latency"} → ${(found.content as { text: string }[])[0]!.text}`);

const { prompts } = await client.listPrompts();
console.log(`\nprompts/list → ${prompts.map((p) => p.name).join(", ")}`);
const prompt = await client.getPrompt({ name: "notes:weekly-review" });
console.log(`prompts/get notes:weekly-review → ${String((prompt.messages[0]!.content as { text: string }).text.split("\n")[0])} …`);

const conversationId = transport.sessionId!.split(".")[0]!;
const { events } = (await (await fetch(new URL(`/v1/conversations/${conversationId}/events`, url), { headers: { Authorization: `Bearer ${apiKey}` } })).json()) as { events: { type: string; subject: string | null }[] };
console.log(`\nthe session's conversation ${conversationId} recorded: ${[...new Set(events.map((e) => e.type))].join(", ")}`);

await transport.terminateSession();
await client.close();
notes.app.close();
