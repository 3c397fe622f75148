import { Hono } from "hono";
import * as z from "zod";
import { hubStub } from "../hub/stub";
import { ConversationsQuery, TurnId, TurnsQuery } from "../protocol/http";
import type { ApiEnv } from "../http/env";
import { conversationInPath } from "../http/conversation";
import { reply } from "../http/problem";
import { params, query } from "../http/validate";

/**
 * `/v1/conversations` (the caller's conversations, newest first, a page at a time: the user's hub keeps the index),
 * `/v1/conversations/:id/turns` (its turns, oldest first, each summed up) and `/v1/conversations/:id/turns/:turnId` (a
 * past turn as it was answered).
 */
export const conversationList = new Hono<ApiEnv>();

conversationList.get("/", query(ConversationsQuery), async (c) => reply(c, await hubStub(c.env, c.var.owner).listConversations(c.req.valid("query"))));

conversationList.get("/:id/turns", conversationInPath, query(TurnsQuery), async (c) => reply(c, await c.var.conversation.stub.turnPage(c.var.owner, c.req.valid("query"))));

const PastTurnParams = z.object({ turnId: TurnId });

conversationList.get("/:id/turns/:turnId", conversationInPath, params(PastTurnParams, { type: "not-found", detail: "no such turn" }), async (c) =>
  reply(c, await c.var.conversation.stub.pastTurn(c.var.owner, c.req.valid("param").turnId)),
);
