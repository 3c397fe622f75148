import { Hono } from "hono";
import type { ApiEnv } from "../http/env";
import { conversationInPath } from "../http/conversation";
import { reply } from "../http/problem";
import { json } from "../http/validate";
import { CompleteDelegationBody } from "../protocol/delegation";

/** `/v1/conversations/:id/delegation…`: subagents run by a frontend's own loop (docs/tools.md, "Subagents"). */
export const delegations = new Hono<ApiEnv>();

/**
 * The child's final answer: stored in the child (which ends), it closes the parent's `delegate` call as its result;
 * the parent's next continuation reads it.
 */
delegations.post("/:id/delegation/complete", conversationInPath, json(CompleteDelegationBody), async (c) =>
  reply(c, await c.var.conversation.stub.completeDelegation(c.var.owner, c.req.valid("json").reply)),
);

/** The conversation's `delegate` calls and the child conversations they started. */
delegations.get("/:id/delegations", conversationInPath, async (c) => reply(c, await c.var.conversation.stub.listDelegations(c.var.owner)));
