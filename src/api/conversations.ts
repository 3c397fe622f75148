import { Hono } from "hono";
import * as z from "zod";
import { QualifiedName } from "../protocol/names";
import { conversationStub } from "../conversation/stub";
import type { ApiEnv } from "../http/env";
import { conversationInPath } from "../http/conversation";
import { reply } from "../http/problem";
import { json, params, query } from "../http/validate";
import { AppendMessagesBody, Attachment, CreateConversationBody, EventsQuery, ItemsQuery, MessagesQuery, RunToolsBody, TurnBody } from "../protocol/http";

/** `/v1/conversations/…`: every route resolves the conversation through the caller's own tenant. */
export const conversations = new Hono<ApiEnv>();

conversations.post("/", json(CreateConversationBody, { optional: true }), async (c) => {
  const body = c.req.valid("json");
  const id = crypto.randomUUID();
  return reply(c, await conversationStub(c.env, c.var.owner, id).create(c.var.owner, id, body.agent, body.compaction), 201);
});

conversations.get("/:id", conversationInPath, async (c) => reply(c, await c.var.conversation.stub.info(c.var.owner)));

conversations.delete("/:id", conversationInPath, async (c) => reply(c, await c.var.conversation.stub.end(c.var.owner)));

conversations.post("/:id/turns", conversationInPath, json(TurnBody), async (c) => reply(c, await c.var.conversation.stub.turn(c.var.owner, c.req.valid("json"))));

/** Runs the open tool calls the runtime serves (apps' tools, search_tools, read_skill, …) and stores their results. */
conversations.post("/:id/tools/run", conversationInPath, json(RunToolsBody, { optional: true }), async (c) =>
  reply(c, await c.var.conversation.stub.runTools(c.var.owner, c.req.valid("json"))),
);

/** Stored messages a page at a time (`?after=<seq>&limit=`): `{messages, nextAfter, hasMore}`. */
conversations.get("/:id/messages", conversationInPath, query(MessagesQuery), async (c) => reply(c, await c.var.conversation.stub.messages(c.var.owner, c.req.valid("query"))));

conversations.post("/:id/messages", conversationInPath, json(AppendMessagesBody), async (c) => {
  const body = c.req.valid("json");
  return reply(c, await c.var.conversation.stub.appendMessages(c.var.owner, body.messages, body.usage), 201);
});

conversations.get("/:id/attachments", conversationInPath, async (c) => reply(c, await c.var.conversation.stub.attachments(c.var.owner)));

conversations.post("/:id/attachments", conversationInPath, json(Attachment), async (c) => reply(c, await c.var.conversation.stub.attach(c.var.owner, c.req.valid("json")), 201));

conversations.delete("/:id/attachments", conversationInPath, json(Attachment), async (c) => reply(c, await c.var.conversation.stub.detach(c.var.owner, c.req.valid("json"))));

conversations.get("/:id/resources", conversationInPath, async (c) => reply(c, await c.var.conversation.stub.resources(c.var.owner)));

conversations.delete("/:id/resources/:fullId", conversationInPath, async (c) =>
  reply(c, await c.var.conversation.stub.removeResource(c.var.owner, c.req.param("fullId"), { notifyApp: true })),
);

const ProviderParams = z.object({ provider: QualifiedName });

conversations.get(
  "/:id/contexts/:provider/items",
  conversationInPath,
  params(ProviderParams, { type: "invalid-request", detail: "provider must be 'app:provider'" }),
  query(ItemsQuery),
  async (c) => reply(c, await c.var.conversation.stub.browse(c.var.owner, c.req.valid("param").provider, c.req.valid("query"))),
);

conversations.get("/:id/events", conversationInPath, query(EventsQuery), async (c) => reply(c, await c.var.conversation.stub.events(c.var.owner, c.req.valid("query"))));
