import { Hono } from "hono";
import * as z from "zod";
import type { ApiEnv } from "../http/env";
import { conversationInPath } from "../http/conversation";
import { problemResponse } from "../http/problem";
import { params } from "../http/validate";
import { TurnId } from "../protocol/http";
import { turnExport } from "../telemetry/agent-context";

/**
 * `GET /v1/conversations/:id/turns/:turnId/export`: a past turn's evidence in the draft Agent Context standard's
 * vocabulary, with its exact model input and that input's SHA-256 (src/telemetry/agent-context.ts, docs/telemetry.md).
 */
export const turnExportRoute = new Hono<ApiEnv>();

const ExportParams = z.object({ turnId: TurnId });

turnExportRoute.get("/:id/turns/:turnId/export", conversationInPath, params(ExportParams, { type: "not-found", detail: "no such turn" }), async (c) => {
  const turn = await c.var.conversation.stub.pastTurn(c.var.owner, c.req.valid("param").turnId);
  return turn.ok ? c.json(await turnExport(turn.value)) : problemResponse(c, turn.problem);
});
