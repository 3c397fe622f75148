import type { Context } from "hono";
import { conversationStub } from "../conversation/stub";
import { ConversationId } from "../protocol/methods";
import type { ApiEnv } from "./auth";

/**
 * The conversation named by `:id`, always within the caller's own tenant and user; null when the id is malformed,
 * so the route answers the same 404 whether it is malformed, missing or someone else's.
 */
export function conversationInPath(c: Context<ApiEnv>) {
  const id = ConversationId.safeParse(c.req.param("id"));
  return id.success ? { id: id.data, stub: conversationStub(c.env, c.var.owner, id.data) } : null;
}
