import { Hono } from "hono";
import * as z from "zod";
import { hubStub } from "../hub/stub";
import { ConversationsQuery, TurnId } from "../protocol/http";
import type { ApiEnv } from "./auth";
import { conversationInPath } from "./conversation-param";
import { noSuchConversation, problemResponse, reply } from "./problem-response";
import { readQuery } from "./read-input";

/**
 * `/v1/conversations` (the caller's conversations, newest first, a page at a time: the user's hub keeps the index) and
 * `/v1/conversations/:id/turns/:turnId` (a past turn as it was answered).
 */
export const conversationList = new Hono<ApiEnv>();

conversationList.get("/", async (c) => {
  const query = readQuery(c, ConversationsQuery);
  return query.ok ? reply(c, await hubStub(c.env, c.var.owner).listConversations(query.value)) : problemResponse(c, query.problem);
});

const PastTurnParams = z.object({ turnId: TurnId });

conversationList.get("/:id/turns/:turnId", async (c) => {
  const conversation = conversationInPath(c);
  if (!conversation) return noSuchConversation(c);
  const params = PastTurnParams.safeParse({ turnId: c.req.param("turnId") });
  if (!params.success) return problemResponse(c, { type: "not-found", detail: "no such turn" });
  return reply(c, await conversation.stub.pastTurn(c.var.owner, params.data.turnId));
});
