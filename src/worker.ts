import { Hono } from "hono";
import { api } from "./api/app";
import { gatewayAnthropic } from "./gateway/anthropic-route";
import { gatewayOpenAI } from "./gateway/openai-route";
import { corsForFrontends } from "./http/cors";
import { withOAuth } from "./http/oauth";
import type { ApiEnv } from "./http/env";
import { notFound, onError } from "./http/problem";

export { AppHub } from "./hub/app-hub";
export { Conversation } from "./conversation/conversation";

/** The Worker: the frontend API and the model gateway (docs/gateway.md) on one origin; state lives in the Durable Objects. */
export const worker = new Hono<ApiEnv>();
worker.use("/v1/*", corsForFrontends); // before authentication: a preflight never meets a 401
worker.route("/v1", gatewayAnthropic); // POST /v1/messages: ahead of the API's bearer-only key, it takes x-api-key and answers in Anthropic's shape
worker.route("/v1", gatewayOpenAI); // POST /v1/chat/completions
worker.route("/", api);
worker.notFound(notFound);
worker.onError(onError);

/** What the Worker answers with: `/mcp` and the OAuth endpoints through the OAuth provider (src/http/oauth.ts), the rest as above. */
export default withOAuth(worker);
