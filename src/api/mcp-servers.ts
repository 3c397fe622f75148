import { Hono } from "hono";
import * as z from "zod";
import type { ApiEnv } from "../http/env";
import { reply } from "../http/problem";
import { json, params } from "../http/validate";
import { hubStub } from "../hub/stub";
import { McpServerDeclaration } from "../protocol/mcp-servers";
import { Name } from "../protocol/names";

/**
 * `/v1/mcp-servers…`: the MCP servers the caller's hub consumes as apps (docs/mcp.md, "Consume"), always the
 * credential's own tenant and user. Header values are write-only: every answer names the headers, never their values.
 */
export const mcpServers = new Hono<ApiEnv>();

const ServerParams = z.object({ name: Name });

mcpServers.get("/", async (c) => c.json({ servers: await hubStub(c.env, c.var.owner).mcpServers() }));

/** Registered, then connected within a few seconds: the answer says whether it is online, and what it offers. */
mcpServers.post("/", json(McpServerDeclaration), async (c) => reply(c, await hubStub(c.env, c.var.owner).registerMcpServer(c.req.valid("json")), 201));

mcpServers.delete("/:name", params(ServerParams, { type: "not-found", detail: "no MCP server of that name is registered" }), async (c) =>
  reply(c, await hubStub(c.env, c.var.owner).removeMcpServer(c.req.valid("param").name)),
);
