import { Hono } from "hono";
import { hubStub } from "../hub/stub";
import { appCredential, offersAppSubprotocol } from "../http/auth";
import { corsForFrontends } from "../http/cors";
import type { ApiEnv } from "../http/env";
import { frontendRequest } from "../http/frontend";
import { problemResponse } from "../http/problem";
import { conversations } from "./conversations";
import { conversationList } from "./conversation-list";
import { history } from "./history";
import { memories } from "./memory";
import { approvals } from "./approvals";
import { delegations } from "./delegations";
import { artifacts } from "./artifacts";
import { mcpServers } from "./mcp-servers";
import { inspect } from "./inspect";
import { inspectorPage } from "../inspect/route";
import { openApiDocument } from "./openapi";
import { turnExportRoute } from "./turn-export";
import { metrics } from "./metrics";
import { mcpRoute } from "./mcp";
import { APP_SUBPROTOCOL, CloseCode } from "../protocol/methods";

/** The frontend API and the apps' socket: authentication, validation and routing; state lives in the Durable Objects. */
export const api = new Hono<ApiEnv>();

api.get("/health", (c) => c.json({ ok: true }));
api.get("/openapi.json", corsForFrontends, (c) => c.json(openApiDocument())); // no auth: the API's description
api.route("/mcp", mcpRoute); // MCP clients (docs/mcp.md): their own errors' shape, and sessions in the Conversation objects
api.route("/inspect", inspectorPage); // the inspector page (docs/inspector.md): public; its calls to /v1 carry the key

/** Apps connect here; the hub for the token's tenant+user takes the socket. */
api.get("/v1/apps/connect", async (c) => {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
    return problemResponse(c, { type: "upgrade-required", detail: "connect with a WebSocket upgrade" });
  }
  const credential = await appCredential(c.env, c.req.raw.headers);
  if (!credential) return refuseSocket(c.req.raw.headers, CloseCode.Unauthorized, "invalid or missing app token");
  const headers = new Headers(c.req.raw.headers);
  headers.set("x-cr-tenant", credential.tenant);
  headers.set("x-cr-user", credential.sub);
  headers.set("x-cr-app", credential.app);
  if (offersAppSubprotocol(c.req.raw.headers)) headers.set("x-cr-subprotocol", APP_SUBPROTOCOL);
  return hubStub(c.env, { tenant: credential.tenant, user: credential.sub }).fetch(new Request(c.req.url, { headers }));
});

/**
 * Browsers never see an upgrade's HTTP status, so a refused app is accepted and
 * closed at once with a code the SDK knows means "do not retry".
 */
function refuseSocket(headers: Headers, code: number, reason: string): Response {
  const { 0: client, 1: server } = new WebSocketPair();
  server.accept();
  server.close(code, reason);
  const protocol = offersAppSubprotocol(headers) ? { "Sec-WebSocket-Protocol": APP_SUBPROTOCOL } : undefined;
  return new Response(null, { status: 101, webSocket: client, headers: protocol });
}

const v1 = new Hono<ApiEnv>();
v1.use("*", ...frontendRequest);
v1.route("/conversations", conversations);
v1.route("/conversations", conversationList);
v1.route("/conversations", history);
v1.route("/conversations", approvals);
v1.route("/conversations", delegations);
v1.route("/conversations", inspect);
v1.route("/conversations", turnExportRoute);
v1.route("/metrics", metrics);
v1.route("/memories", memories);
v1.route("/", artifacts);
v1.route("/mcp-servers", mcpServers);
v1.get("/agents", async (c) => c.json({ agents: await hubStub(c.env, c.var.owner).agents() }));
v1.get("/contexts", async (c) => c.json({ providers: await hubStub(c.env, c.var.owner).providers() }));
api.route("/v1", v1);
