import { Hono } from "hono";
import * as z from "zod";
import { CompactionPolicy } from "../protocol/policies";
import { resultKey } from "../artifacts/read";
import { ConversationId } from "../protocol/methods";
import type { ApiEnv } from "../http/env";
import { conversationInPath } from "../http/conversation";
import { problemResponse, reply } from "../http/problem";
import { json, params, query } from "../http/validate";
import { CompactBody, RequestMessagesQuery, SetMessagesBody } from "../protocol/http";

/** `/v1/conversations/:id/…` for history: the context-manager contract over HTTP (docs/history.md). */
export const history = new Hono<ApiEnv>();

/** Resume: the whole history of a conversation kept elsewhere, into one that has no messages yet. */
history.put("/:id/messages", conversationInPath, json(SetMessagesBody), async (c) =>
  reply(c, await c.var.conversation.stub.setMessages(c.var.owner, c.req.valid("json").messages), 201),
);

/** What the model would read before a new message, within `maxTokens`. */
history.get("/:id/context", conversationInPath, query(RequestMessagesQuery), async (c) =>
  reply(c, await c.var.conversation.stub.requestMessages(c.var.owner, c.req.valid("query").maxTokens)),
);

history.get("/:id/compaction", conversationInPath, async (c) => reply(c, await c.var.conversation.stub.compactionStatus(c.var.owner)));

history.put("/:id/compaction", conversationInPath, json(CompactionPolicy), async (c) => reply(c, await c.var.conversation.stub.setCompactionPolicy(c.var.owner, c.req.valid("json"))));

history.post("/:id/compact", conversationInPath, json(CompactBody, { optional: true }), async (c) => reply(c, await c.var.conversation.stub.compact(c.var.owner, c.req.valid("json"))));

/** Clears the model's view of the history; the stored messages stay. */
history.post("/:id/clear", conversationInPath, async (c) => reply(c, await c.var.conversation.stub.clearHistory(c.var.owner)));

const NO_SUCH_RESULT = { type: "not-found", detail: "no such cleared result" } as const;
const ResultParams = z.object({ id: ConversationId, seq: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER) });

/**
 * The full text of a tool result compaction cleared, where its stub points (`r2://results/{conversation}/{seq}`). A
 * malformed conversation id is one more cleared result there is not: no stub is needed, the key is the owner's.
 */
history.get("/:id/results/:seq", params(ResultParams, NO_SUCH_RESULT), async (c) => {
  const { id, seq } = c.req.valid("param");
  const object = await c.env.ARTIFACTS.get(resultKey(c.var.owner, id, seq));
  return object ? c.body(object.body, 200, { "Content-Type": "text/plain; charset=utf-8" }) : problemResponse(c, NO_SUCH_RESULT);
});
