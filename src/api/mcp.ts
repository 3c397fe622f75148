/**
 * `/mcp/{app}/{agent}`: the runtime as an MCP server over Streamable HTTP (docs/mcp.md, "Serve"). The Worker checks
 * the caller and routes; the session lives in a Conversation object, named by the session's id (its conversation)
 * within the caller's own tenant, so one user's session id is a 404 to anyone else.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import * as z from "zod";
import { conversationStub } from "../conversation/stub";
import { corsForFrontends } from "../http/cors";
import type { ApiEnv } from "../http/env";
import { mcpAuth } from "../http/mcp-auth";
import { LIMITS } from "../protocol/limits";
import { ConversationId } from "../protocol/methods";
import { Name } from "../protocol/names";
import { mcpError, sessionConversation } from "../mcp/serve/wire";

const McpPath = z.object({ app: Name, agent: Name });
/** `?conversation=`: an initialize that joins a conversation the user already has, rather than making one. */
const McpQuery = z.object({ conversation: ConversationId.optional() });

export const mcpRoute = new Hono<ApiEnv>();
mcpRoute.use("*", corsForFrontends, mcpAuth);

mcpRoute.on(
  ["GET", "POST", "DELETE"],
  "/:app/:agent",
  bodyLimit({ maxSize: LIMITS.httpBodyBytes, onError: () => mcpError(413, `Payload Too Large: bodies are limited to ${LIMITS.httpBodyBytes} bytes`) }),
  async (c) => {
    const path = McpPath.safeParse(c.req.param());
    if (!path.success) return mcpError(404, "Not Found: /mcp/{app}/{agent} names a registered agent");
    const query = McpQuery.safeParse(c.req.query());
    if (!query.success) return mcpError(400, "Bad Request: 'conversation' is 8-64 letters, digits, '_' or '-'");
    const agent = `${path.data.app}:${path.data.agent}`;
    const sessionId = c.req.header("Mcp-Session-Id") ?? null;
    const owner = c.var.owner;
    if (sessionId !== null) {
      const conversationId = sessionConversation(sessionId);
      if (conversationId === null) return mcpError(404, "Session not found: initialize a new session", -32001);
      return conversationStub(c.env, owner, conversationId).mcp(owner, c.req.raw, { conversationId, agent, sessionId, create: false });
    }
    const joined = query.data.conversation;
    const conversationId = joined ?? crypto.randomUUID();
    return conversationStub(c.env, owner, conversationId).mcp(owner, c.req.raw, { conversationId, agent, sessionId: null, create: joined === undefined });
  },
);

mcpRoute.all("/:app/:agent", () => {
  const refused = mcpError(405, "Method Not Allowed: use POST, GET or DELETE");
  refused.headers.set("Allow", "GET, POST, DELETE");
  return refused;
});
mcpRoute.all("*", () => mcpError(404, "Not Found: an MCP session is served at /mcp/{app}/{agent}"));
