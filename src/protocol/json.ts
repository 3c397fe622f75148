import * as z from "zod";

/**
 * A JSON object, typed shallowly: Durable Object RPC's types turn `unknown` into `never`, and a recursive
 * JSON type (or `any`) into "type instantiation is excessively deep" at the caller. Each value is a JSON
 * scalar or some object (an array or an object, not looked into).
 */
export const JsonObject = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.custom<object>((value) => typeof value === "object" && value !== null, "a JSON value")]),
);
export type JsonObject = z.infer<typeof JsonObject>;
