import type { z } from "zod";
import { jsonBody, type Validator } from "../http/validate";
import { gatewayError, type GatewayError } from "./errors";

/**
 * A gateway request's body through hono's validator (read with `c.req.valid("json")`): any Content-Type (model clients
 * are lax about it), then the schema's first issue as the 400, its path as `param` in the API's own notation; `answer`
 * puts each refusal in that API's error shape.
 */
export function gatewayBody<S extends z.ZodType>(schema: S, param: (path: readonly PropertyKey[]) => string, answer: (error: GatewayError) => Response): Validator<"json", unknown, z.output<S>> {
  return jsonBody(
    { anyMediaType: true },
    () => answer(gatewayError(400, "the body is not valid JSON", "invalid_json")),
    (data) => {
      const parsed = schema.safeParse(data);
      if (parsed.success) return parsed.data as z.output<S>;
      const issue = parsed.error.issues[0]!;
      const where = param(issue.path);
      return answer(gatewayError(400, `${where || "body"}: ${issue.message}`, "invalid_request", { param: where || null }));
    },
  );
}
