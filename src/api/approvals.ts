import { Hono } from "hono";
import * as z from "zod";
import type { ApiEnv } from "./auth";
import { conversationInPath } from "./conversation-param";
import { noSuchConversation, problemResponse, reply } from "./problem-response";
import { readJson, readParams } from "./read-input";
import { ApprovalDecisionBody, ApprovalRequestBody, ToolCallId } from "../protocol/http";

const DecisionParams = z.object({ id: z.string(), toolCallId: ToolCallId });

/** `/v1/conversations/:id/approvals…`: the user's approval of tool calls (docs/history.md, "Approvals"). */
export const approvals = new Hono<ApiEnv>();

/** The approvals of the calls still open: what a frontend that reconnects asks the user again. */
approvals.get("/:id/approvals", async (c) => {
  const conversation = conversationInPath(c);
  return conversation ? reply(c, await conversation.stub.listApprovals(c.var.owner)) : noSuchConversation(c);
});

/** An open call now waits for the user's approval: its result is refused until they decide. */
approvals.post("/:id/approvals", async (c) => {
  const conversation = conversationInPath(c);
  if (!conversation) return noSuchConversation(c);
  const body = await readJson(c, ApprovalRequestBody);
  if (!body.ok) return problemResponse(c, body.problem);
  const result = await conversation.stub.requestApproval(c.var.owner, body.value.toolCallId);
  return result.ok ? c.json({ approval: result.value.approval }, result.value.created ? 201 : 200) : problemResponse(c, result.problem);
});

/** The user's decision: approved, the call waits for its result; denied, the call is answered with the denial. */
approvals.post("/:id/approvals/:toolCallId", async (c) => {
  const conversation = conversationInPath(c);
  if (!conversation) return noSuchConversation(c);
  const params = readParams(c, DecisionParams);
  if (!params.ok) return problemResponse(c, params.problem);
  const body = await readJson(c, ApprovalDecisionBody);
  return body.ok ? reply(c, await conversation.stub.decideApproval(c.var.owner, params.value.toolCallId, body.value)) : problemResponse(c, body.problem);
});
