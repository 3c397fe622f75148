import { createMiddleware } from "hono/factory";
import { conversationStub } from "../conversation/stub";
import { ConversationId } from "../protocol/methods";
import type { ApiEnv } from "./env";
import { ProblemException } from "./problem";

type ConversationEnv = ApiEnv & { Variables: { conversation: { id: string; stub: ReturnType<typeof conversationStub> } } };

/**
 * The conversation named by `:id`, always within the caller's own tenant and user, as `c.var.conversation`. A malformed
 * id answers the same 404 as an unknown one or someone else's (which the conversation itself refuses).
 */
export const conversationInPath = createMiddleware<ConversationEnv>(async (c, next) => {
  const id = ConversationId.safeParse(c.req.param("id"));
  if (!id.success) throw new ProblemException({ type: "not-found", detail: "no such conversation" });
  c.set("conversation", { id: id.data, stub: conversationStub(c.env, c.var.owner, id.data) });
  await next();
});
