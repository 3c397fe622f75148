import { Hono } from "hono";
import { QualifiedName } from "../protocol/names";
import { conversationStub } from "../conversation/stub";
import type { ApiEnv } from "./auth";
import { conversationInPath } from "./conversation-param";
import { noSuchConversation, problemResponse, reply } from "./problem-response";
import { readJson, readQuery } from "./read-input";
import { AppendMessagesBody, Attachment, CreateConversationBody, EventsQuery, ItemsQuery, MessagesQuery, RunToolsBody, TurnBody } from "../protocol/http";

/** `/v1/conversations/…`: every route resolves the conversation through the caller's own tenant. */
export const conversations = new Hono<ApiEnv>();


conversations.post("/", async (c) => {
  const body = await readJson(c, CreateConversationBody, { optional: true });
  if (!body.ok) return problemResponse(c, body.problem);
  const id = crypto.randomUUID();
  return reply(c, await conversationStub(c.env, c.var.owner, id).create(c.var.owner, id, body.value.agent, body.value.compaction), 201);
});

conversations.get("/:id", async (c) => {
  const stub = conversationInPath(c)?.stub;
  return stub ? reply(c, await stub.info(c.var.owner)) : noSuchConversation(c);
});

conversations.delete("/:id", async (c) => {
  const stub = conversationInPath(c)?.stub;
  return stub ? reply(c, await stub.end(c.var.owner)) : noSuchConversation(c);
});

conversations.post("/:id/turns", async (c) => {
  const stub = conversationInPath(c)?.stub;
  if (!stub) return noSuchConversation(c);
  const body = await readJson(c, TurnBody);
  return body.ok ? reply(c, await stub.turn(c.var.owner, body.value)) : problemResponse(c, body.problem);
});

/** Runs the open tool calls the runtime serves (apps' tools, search_tools, read_skill, …) and stores their results. */
conversations.post("/:id/tools/run", async (c) => {
  const stub = conversationInPath(c)?.stub;
  if (!stub) return noSuchConversation(c);
  const body = await readJson(c, RunToolsBody, { optional: true });
  return body.ok ? reply(c, await stub.runTools(c.var.owner, body.value)) : problemResponse(c, body.problem);
});

/** Stored messages a page at a time (`?after=<seq>&limit=`): `{messages, nextAfter, hasMore}`. */
conversations.get("/:id/messages", async (c) => {
  const stub = conversationInPath(c)?.stub;
  if (!stub) return noSuchConversation(c);
  const query = readQuery(c, MessagesQuery);
  return query.ok ? reply(c, await stub.messages(c.var.owner, query.value)) : problemResponse(c, query.problem);
});

conversations.post("/:id/messages", async (c) => {
  const stub = conversationInPath(c)?.stub;
  if (!stub) return noSuchConversation(c);
  const body = await readJson(c, AppendMessagesBody);
  return body.ok ? reply(c, await stub.appendMessages(c.var.owner, body.value.messages, body.value.usage), 201) : problemResponse(c, body.problem);
});

conversations.get("/:id/attachments", async (c) => {
  const stub = conversationInPath(c)?.stub;
  return stub ? reply(c, await stub.attachments(c.var.owner)) : noSuchConversation(c);
});

conversations.post("/:id/attachments", async (c) => {
  const stub = conversationInPath(c)?.stub;
  if (!stub) return noSuchConversation(c);
  const body = await readJson(c, Attachment);
  return body.ok ? reply(c, await stub.attach(c.var.owner, body.value), 201) : problemResponse(c, body.problem);
});

conversations.delete("/:id/attachments", async (c) => {
  const stub = conversationInPath(c)?.stub;
  if (!stub) return noSuchConversation(c);
  const body = await readJson(c, Attachment);
  return body.ok ? reply(c, await stub.detach(c.var.owner, body.value)) : problemResponse(c, body.problem);
});

conversations.get("/:id/resources", async (c) => {
  const stub = conversationInPath(c)?.stub;
  return stub ? reply(c, await stub.resources(c.var.owner)) : noSuchConversation(c);
});

conversations.delete("/:id/resources/:fullId", async (c) => {
  const stub = conversationInPath(c)?.stub;
  if (!stub) return noSuchConversation(c);
  return reply(c, await stub.removeResource(c.var.owner, c.req.param("fullId"), { notifyApp: true }));
});

conversations.get("/:id/contexts/:provider/items", async (c) => {
  const stub = conversationInPath(c)?.stub;
  if (!stub) return noSuchConversation(c);
  const provider = QualifiedName.safeParse(c.req.param("provider"));
  if (!provider.success) return problemResponse(c, { type: "invalid-request", detail: "provider must be 'app:provider'" });
  const query = readQuery(c, ItemsQuery);
  return query.ok ? reply(c, await stub.browse(c.var.owner, provider.data, query.value)) : problemResponse(c, query.problem);
});

conversations.get("/:id/events", async (c) => {
  const stub = conversationInPath(c)?.stub;
  if (!stub) return noSuchConversation(c);
  const query = readQuery(c, EventsQuery);
  return query.ok ? reply(c, await stub.events(c.var.owner, query.value)) : problemResponse(c, query.problem);
});
