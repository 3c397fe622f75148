import { Hono } from "hono";
import type { ApiEnv } from "./auth";
import { conversationInPath } from "./conversation-param";
import { noSuchConversation, problemResponse, reply } from "./problem-response";
import { readJson } from "./read-input";
import { CompleteDelegationBody } from "../protocol/delegation";

/** `/v1/conversations/:id/delegation…`: subagents run by a frontend's own loop (docs/tools.md, "Subagents"). */
export const delegations = new Hono<ApiEnv>();

/**
 * The child's final answer: stored in the child (which ends), it closes the parent's `delegate` call as its result;
 * the parent's next continuation reads it.
 */
delegations.post("/:id/delegation/complete", async (c) => {
  const conversation = conversationInPath(c);
  if (!conversation) return noSuchConversation(c);
  const body = await readJson(c, CompleteDelegationBody);
  return body.ok ? reply(c, await conversation.stub.completeDelegation(c.var.owner, body.value.reply)) : problemResponse(c, body.problem);
});

/** The conversation's `delegate` calls and the child conversations they started. */
delegations.get("/:id/delegations", async (c) => {
  const conversation = conversationInPath(c);
  return conversation ? reply(c, await conversation.stub.listDelegations(c.var.owner)) : noSuchConversation(c);
});
