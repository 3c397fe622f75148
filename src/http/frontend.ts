import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { timing } from "hono/timing";
import { LIMITS } from "../protocol/limits";
import { requireApiKey } from "./auth";
import type { ApiEnv } from "./env";
import { problemResponse } from "./problem";

/** `Server-Timing: total;dur=…`: the runtime's own time, apart from the network, for frontends and the benchmark. */
export const serverTiming = timing({ totalDescription: "runtime" });

/** What a frontend's request passes before its route, each refusal as problem+json: the timing, the API key, the body's size. */
export const frontendRequest: MiddlewareHandler<ApiEnv>[] = [
  serverTiming,
  requireApiKey,
  bodyLimit({
    maxSize: LIMITS.httpBodyBytes,
    onError: (c) => problemResponse(c, { type: "payload-too-large", detail: `bodies are limited to ${LIMITS.httpBodyBytes} bytes` }),
  }),
];
