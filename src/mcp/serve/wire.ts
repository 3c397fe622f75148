/**
 * What the Worker's MCP route and the Conversation object share about a session: how its id names its conversation,
 * the versions served, and the JSON-RPC error bodies the transport's own refusals also use.
 */
import { ConversationId } from "../../protocol/methods";

/** The MCP versions served; an initialize asking for another is answered with the first (the latest). */
export const MCP_PROTOCOL_VERSIONS: readonly string[] = ["2025-11-25", "2025-06-18"];

/** Where a request goes: the agent its path names, its session (null for an initialize), whether to make a conversation. */
export interface McpTarget {
  conversationId: string;
  agent: string;
  sessionId: string | null;
  /** An initialize without `?conversation=`: its session gets a conversation of its own. */
  create: boolean;
}

/** A session id is `<conversation id>.<32 hex digits>`: the Worker routes by it, the conversation checks the rest. */
export function sessionConversation(sessionId: string): string | null {
  const match = /^([A-Za-z0-9_-]{8,64})\.[0-9a-f]{32}$/.exec(sessionId);
  return match && ConversationId.safeParse(match[1]).success ? match[1]! : null;
}

/** A refusal before any JSON-RPC request is read, shaped as the SDK's transport shapes its own. */
export function mcpError(status: number, message: string, code = -32000): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}
