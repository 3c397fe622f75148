import type { Context } from "hono";
import type { z } from "zod";
import { fail, ok, type Result } from "../core/problem";
import { issuesOf } from "../protocol/jsonrpc";

/** A JSON body checked in order: media type, syntax, then the schema. Size is bounded by the bodyLimit middleware. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S, options: { optional?: boolean } = {}): Promise<Result<z.output<S>>> {
  const text = await c.req.text();
  if (text.trim() === "" && options.optional) return validate(schema, {});
  const type = c.req.header("Content-Type") ?? "";
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(type)) return fail("unsupported-media-type", "send the body as application/json");
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return fail("invalid-request", "the body is not valid JSON");
  }
  return validate(schema, data);
}

export function readQuery<S extends z.ZodType>(c: Context, schema: S): Result<z.output<S>> {
  return validate(schema, c.req.query());
}

export function readParams<S extends z.ZodType>(c: Context, schema: S): Result<z.output<S>> {
  return validate(schema, c.req.param());
}

function validate<S extends z.ZodType>(schema: S, data: unknown): Result<z.output<S>> {
  const parsed = schema.safeParse(data);
  return parsed.success ? ok(parsed.data) : fail("invalid-request", "the input does not match the schema", issuesOf(parsed.error));
}
