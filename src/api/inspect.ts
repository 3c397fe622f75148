import { Hono } from "hono";
import * as z from "zod";
import { WhatIfBody } from "../protocol/what-if";
import type { ApiEnv } from "../http/env";
import { conversationInPath } from "../http/conversation";
import { reply } from "../http/problem";
import { json, params } from "../http/validate";
import { TurnId } from "../protocol/http";

/** `/v1/conversations/:id/turns/:turnId/what-if`: the inspector's replay of a stored turn under other limits (docs/inspector.md). Read-only. */
export const inspect = new Hono<ApiEnv>();

const TurnParams = z.object({ turnId: TurnId });

inspect.post("/:id/turns/:turnId/what-if", conversationInPath, params(TurnParams, { type: "not-found", detail: "no such turn" }), json(WhatIfBody, { optional: true }), async (c) =>
  reply(c, await c.var.conversation.stub.whatIf(c.var.owner, c.req.valid("param").turnId, c.req.valid("json"))),
);
