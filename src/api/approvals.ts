import { Hono } from "hono";
import * as z from "zod";
import type { ApiEnv } from "../http/env";
import { conversationInPath } from "../http/conversation";
import { problemResponse, reply } from "../http/problem";
import { json, params } from "../http/validate";
import { ApprovalDecisionBody, ApprovalRequestBody, ToolCallId } from "../protocol/http";

const DecisionParams = z.object({ id: z.string(), toolCallId: ToolCallId });

/** `/v1/conversations/:id/approvals…`: the user's approval of tool calls (docs/history.md, "Approvals"). */
export const approvals = new Hono<ApiEnv>();

/** The approvals of the calls still open: what a frontend that reconnects asks the user again. */
approvals.get("/:id/approvals", conversationInPath, async (c) => reply(c, await c.var.conversation.stub.listApprovals(c.var.owner)));

/** An open call now waits for the user's approval: its result is refused until they decide. */
approvals.post("/:id/approvals", conversationInPath, json(ApprovalRequestBody), async (c) => {
  const result = await c.var.conversation.stub.requestApproval(c.var.owner, c.req.valid("json").toolCallId);
  return result.ok ? c.json({ approval: result.value.approval }, result.value.created ? 201 : 200) : problemResponse(c, result.problem);
});

/** The user's decision: approved, the call waits for its result; denied, the call is answered with the denial. */
approvals.post("/:id/approvals/:toolCallId", conversationInPath, params(DecisionParams), json(ApprovalDecisionBody), async (c) =>
  reply(c, await c.var.conversation.stub.decideApproval(c.var.owner, c.req.valid("param").toolCallId, c.req.valid("json"))),
);
