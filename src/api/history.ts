import { Hono } from "hono";
import * as z from "zod";
import { CompactionPolicy } from "../protocol/policies";
import { resultKey } from "../artifacts/read";
import type { ApiEnv } from "./auth";
import { conversationInPath } from "./conversation-param";
import { noSuchConversation, problemResponse, reply } from "./problem-response";
import { readJson, readQuery } from "./read-input";
import { CompactBody, RequestMessagesQuery, SetMessagesBody } from "../protocol/http";

/** `/v1/conversations/:id/…` for history: the context-manager contract over HTTP (docs/history.md). */
export const history = new Hono<ApiEnv>();

/** Resume: the whole history of a conversation kept elsewhere, into one that has no messages yet. */
history.put("/:id/messages", async (c) => {
  const conversation = conversationInPath(c);
  if (!conversation) return noSuchConversation(c);
  const body = await readJson(c, SetMessagesBody);
  return body.ok ? reply(c, await conversation.stub.setMessages(c.var.owner, body.value.messages), 201) : problemResponse(c, body.problem);
});

/** What the model would read before a new message, within `maxTokens`. */
history.get("/:id/context", async (c) => {
  const conversation = conversationInPath(c);
  if (!conversation) return noSuchConversation(c);
  const query = readQuery(c, RequestMessagesQuery);
  return query.ok ? reply(c, await conversation.stub.requestMessages(c.var.owner, query.value.maxTokens)) : problemResponse(c, query.problem);
});

history.get("/:id/compaction", async (c) => {
  const conversation = conversationInPath(c);
  return conversation ? reply(c, await conversation.stub.compactionStatus(c.var.owner)) : noSuchConversation(c);
});

history.put("/:id/compaction", async (c) => {
  const conversation = conversationInPath(c);
  if (!conversation) return noSuchConversation(c);
  const body = await readJson(c, CompactionPolicy);
  return body.ok ? reply(c, await conversation.stub.setCompactionPolicy(c.var.owner, body.value)) : problemResponse(c, body.problem);
});

history.post("/:id/compact", async (c) => {
  const conversation = conversationInPath(c);
  if (!conversation) return noSuchConversation(c);
  const body = await readJson(c, CompactBody, { optional: true });
  return body.ok ? reply(c, await conversation.stub.compact(c.var.owner, body.value)) : problemResponse(c, body.problem);
});

/** Clears the model's view of the history; the stored messages stay. */
history.post("/:id/clear", async (c) => {
  const conversation = conversationInPath(c);
  return conversation ? reply(c, await conversation.stub.clearHistory(c.var.owner)) : noSuchConversation(c);
});

const Seq = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** The full text of a tool result compaction cleared, where its stub points (`r2://results/{conversation}/{seq}`). */
history.get("/:id/results/:seq", async (c) => {
  const conversation = conversationInPath(c);
  const seq = Seq.safeParse(c.req.param("seq"));
  if (!conversation || !seq.success) return problemResponse(c, { type: "not-found", detail: "no such cleared result" });
  const object = await c.env.ARTIFACTS.get(resultKey(c.var.owner, conversation.id, seq.data));
  if (!object) return problemResponse(c, { type: "not-found", detail: "no such cleared result" });
  return c.body(object.body, 200, { "Content-Type": "text/plain; charset=utf-8" });
});
