import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { timing } from "hono/timing";
import { LIMITS } from "../protocol/limits";
import { hubStub } from "../hub/stub";
import { appCredential, offersAppSubprotocol, requireApiKey, type ApiEnv } from "./auth";
import { conversations } from "./conversations";
import { conversationList } from "./conversation-list";
import { history } from "./history";
import { memories } from "./memory";
import { approvals } from "./approvals";
import { delegations } from "./delegations";
import { artifacts } from "./artifacts";
import { problemResponse } from "./problem-response";
import { gatewayOpenAI } from "../gateway/openai-route";
import { gatewayAnthropic } from "../gateway/anthropic-route";
import { corsForFrontends } from "./cors";
import { openApiDocument } from "./openapi";
import { APP_SUBPROTOCOL, CloseCode } from "../protocol/methods";

/** The Worker front: authentication, validation and routing; state lives in the Durable Objects. */
export const api = new Hono<ApiEnv>();
api.use("/v1/*", corsForFrontends); // before authentication: a preflight never meets a 401

api.get("/health", (c) => c.json({ ok: true }));
api.get("/openapi.json", corsForFrontends, (c) => c.json(openApiDocument())); // no auth: the API's description

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
// `Server-Timing: total;dur=…`: the runtime's own time, apart from the network, for frontends and the benchmark.
v1.use("*", timing({ totalDescription: "runtime" }));
v1.use("*", requireApiKey);
v1.use(
  "*",
  bodyLimit({
    maxSize: LIMITS.httpBodyBytes,
    onError: (c) => problemResponse(c, { type: "payload-too-large", detail: `bodies are limited to ${LIMITS.httpBodyBytes} bytes` }),
  }),
);
v1.route("/conversations", conversations);
v1.route("/conversations", conversationList);
v1.route("/conversations", history);
v1.route("/conversations", approvals);
v1.route("/conversations", delegations);
v1.route("/memories", memories);
v1.route("/", gatewayOpenAI); // the model gateway: POST /v1/chat/completions (docs/gateway.md)
v1.route("/", artifacts);
v1.get("/agents", async (c) => c.json({ agents: await hubStub(c.env, c.var.owner).agents() }));
v1.get("/contexts", async (c) => c.json({ providers: await hubStub(c.env, c.var.owner).providers() }));
api.route("/v1", gatewayAnthropic); // POST /v1/messages (docs/gateway.md): ahead of v1, it takes x-api-key and answers in Anthropic's shape
api.route("/v1", v1);

api.notFound((c) => problemResponse(c, { type: "not-found", detail: `no route ${c.req.method} ${new URL(c.req.url).pathname}` }));

api.onError((error, c) => {
  // The message only: bodies may carry secrets and are never logged.
  console.error("unhandled error", error instanceof Error ? error.message : String(error));
  return c.json({ type: "urn:context-runtime:problem:internal", title: "Internal error", status: 500, detail: "an unexpected error occurred" }, 500, {
    "Content-Type": "application/problem+json",
  });
});
