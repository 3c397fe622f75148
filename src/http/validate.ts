import type { Context, MiddlewareHandler, ValidationTargets } from "hono";
import { validator } from "hono/validator";
import type { z } from "zod";
import { failWith, ok, type Problem, type Result } from "../core/problem";
import { issuesOf } from "../protocol/jsonrpc";
import { ProblemException } from "./problem";

/**
 * Input checked by our zod schemas before the route runs (hono's `validator`, and its contract for JSON bodies); a route
 * reads it with `c.req.valid("json")`, `c.req.valid("query")` or `c.req.valid("param")`. The API's refusals are
 * ProblemExceptions, answered by `onError`.
 */

/** A middleware whose checked input the route reads as `c.req.valid(target)` (typed as hono's validator types it). */
export type Validator<Target extends keyof ValidationTargets, In, Out> = MiddlewareHandler<any, string, { in: { [K in Target]: In }; out: { [K in Target]: Out } }>;

export interface BodyOptions {
  /** An empty body reads as `{}`. */
  optional?: boolean;
  /** Any Content-Type (the gateway: model clients are lax about it); else only JSON's, or 415. */
  anyMediaType?: boolean;
}

/** Why a body is not JSON at all, before any schema: each edge words it its own way. */
export type BodyRefusal = "media-type" | "syntax";

const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json\b/i;

/** The body parsed once, checked in order: media type, then syntax. Size is bounded by the bodyLimit middleware. */
async function parseBody(c: Context, options: BodyOptions): Promise<Result<unknown, BodyRefusal>> {
  const text = await c.req.text();
  if (text.trim() === "" && options.optional) return ok({});
  if (!options.anyMediaType && !JSON_MEDIA_TYPE.test(c.req.header("Content-Type") ?? "")) return failWith("media-type");
  try {
    return ok(JSON.parse(text));
  } catch {
    return failWith("syntax");
  }
}

/**
 * A JSON body on the contract of hono's `validator` (the route reads `c.req.valid("json")`), parsed once, here: hono's
 * own "json" target parses the text again, refuses an empty body, words a syntax error its own way and skips a
 * Content-Type it does not know. `check` gives the value, or the answer that refuses it.
 */
export function jsonBody<T>(
  options: BodyOptions,
  refuse: (why: BodyRefusal, c: Context) => Response,
  check: (data: unknown, c: Context) => T | Response,
): Validator<"json", unknown, T> {
  return async (c, next) => {
    const body = await parseBody(c, options);
    if (!body.ok) return refuse(body.problem, c);
    const checked = check(body.value, c);
    if (checked instanceof Response) return checked;
    c.req.addValidatedData("json", checked as {});
    await next();
  };
}

/** A JSON body for the API: 415 unless it is JSON, 400 when it does not parse or match `schema` (with its issues). */
export function json<S extends z.ZodType>(schema: S, options: Pick<BodyOptions, "optional"> = {}): Validator<"json", z.input<S>, z.output<S>> {
  return jsonBody(options, refuseBody, (data) => valid(schema, data)) as Validator<"json", z.input<S>, z.output<S>>;
}

/** The query string, one value per name (the first, as `c.req.query()` reads it), against `schema`. */
export function query<S extends z.ZodType>(schema: S): Validator<"query", z.input<S>, z.output<S>> {
  return validator("query", (value) => valid(schema, Object.fromEntries(Object.entries(value).map(([name, values]) => [name, Array.isArray(values) ? values[0] : values])))) as Validator<"query", z.input<S>, z.output<S>>;
}

/** The path's parameters against `schema`; `refusal`, when given, answers instead of the schema's issues (e.g. a 404). */
export function params<S extends z.ZodType>(schema: S, refusal?: Problem): Validator<"param", z.input<S>, z.output<S>> {
  return validator("param", (value) => valid(schema, value, refusal)) as Validator<"param", z.input<S>, z.output<S>>;
}

function refuseBody(why: BodyRefusal): never {
  throw new ProblemException(
    why === "media-type" ? { type: "unsupported-media-type", detail: "send the body as application/json" } : { type: "invalid-request", detail: "the body is not valid JSON" },
  );
}

function valid<S extends z.ZodType>(schema: S, data: unknown, refusal?: Problem): z.output<S> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  throw new ProblemException(refusal ?? { type: "invalid-request", detail: "the input does not match the schema", issues: issuesOf(parsed.error) });
}
