import { Hono } from "hono";
import type { ApiEnv } from "../http/env";
import { hubStub } from "../hub/stub";

/** `GET /v1/metrics`: the caller's own counters per agent, from the user's hub (src/telemetry/metrics.ts, docs/telemetry.md). */
export const metrics = new Hono<ApiEnv>();

metrics.get("/", async (c) => c.json(await hubStub(c.env, c.var.owner).metricsPage()));
