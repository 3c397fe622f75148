import * as z from "zod";
import { LIMITS } from "./limits";
import { Text } from "./text";

/** OpenAI chat-format messages: what the model reads and what frontends append. */
export const ToolCall = z.object({
  id: z.string().min(1).max(128),
  type: z.literal("function"),
  function: z.object({
    name: z.string().min(1).max(LIMITS.nameChars),
    arguments: Text(LIMITS.messageChars),
  }),
});
export type ToolCall = z.infer<typeof ToolCall>;

const text = Text(LIMITS.messageChars);

/** An image the user shared, by https URL (no data URIs: an image must never make a stored row approach 2 MB). */
export const ImagePart = z
  .object({
    type: z.literal("image_url"),
    image_url: z
      .object({
        url: z.url({ protocol: /^https$/, hostname: z.regexes.domain, error: "an https URL to the image (no http: or data: URLs)" }).max(2_048),
        detail: z.enum(["low", "high", "auto"]).optional(),
      })
      .strict(),
  })
  .strict();
export type ImagePart = z.infer<typeof ImagePart>;
export const TextPart = z.object({ type: z.literal("text"), text: z.string() }).strict();
export type TextPart = z.infer<typeof TextPart>;

export const SystemMessage = z.object({ role: z.literal("system"), content: z.string() });
/** Text, or (when it carries images) OpenAI content parts. */
export const UserMessage = z.object({ role: z.literal("user"), content: z.union([z.string(), z.array(z.union([TextPart, ImagePart]))]) });
export const AssistantMessage = z.object({
  role: z.literal("assistant"),
  content: text.nullable(),
  tool_calls: z.array(ToolCall).min(1).max(LIMITS.toolsPerAgent).optional(),
});
export const ToolMessage = z.object({
  role: z.literal("tool"),
  tool_call_id: z.string().min(1).max(128),
  content: Text(LIMITS.toolResultChars),
});

export const ChatMessage = z.discriminatedUnion("role", [SystemMessage, UserMessage, AssistantMessage, ToolMessage]);
export type ChatMessage = z.infer<typeof ChatMessage>;

/**
 * Messages that come straight from a model SDK (the official `openai` client's
 * `choices[0].message`, a tool result the app built) are taken as they are
 * handed over: keys the runtime does not store (`annotations`, `audio`,
 * `function_call`, `name`, …) are stripped, never stored, and each parses to
 * the stored shape above. Our own bodies stay strict.
 */
// A custom (free-form) tool call is in the SDK's types, so a message passes the type check as it is; the runtime only
// runs and pairs function calls, so it is refused with a clear reason rather than a missing `function`.
const CustomToolCall = z.object({ type: z.literal("custom") }).transform((_, ctx): never => {
  ctx.addIssue({ code: "custom", message: "only function tool calls (type 'function') are supported", path: ["type"] });
  return z.NEVER;
});
const ModelToolCall = z.discriminatedUnion("type", [ToolCall, CustomToolCall]);

/** The model's reply as an SDK returns it. When it refused (`content` null, `refusal` set), the refusal is what it said: it is stored as the content. `tool_calls` null or `[]` means no calls. */
export const ModelAssistantMessage = z
  .object({
    role: z.literal("assistant"),
    content: text.nullish(),
    refusal: text.nullish(),
    tool_calls: z.array(ModelToolCall).max(LIMITS.toolsPerAgent).nullish(),
  })
  .transform(({ content, refusal, tool_calls }) => ({
    role: "assistant" as const,
    content: content ?? refusal ?? null,
    ...(tool_calls?.length ? { tool_calls } : {}),
  }));

/** A tool result's content: text, or text content parts (stored joined by newlines, as `textOf` reads them). */
export const ToolResultContent = z
  .union([z.string(), z.array(z.object({ type: z.literal("text"), text: z.string() }))])
  .transform((c) => (typeof c === "string" ? c : c.map((p) => p.text).join("\n")))
  .pipe(Text(LIMITS.toolResultChars));

/** A tool result as a frontend or SDK builds it: text or text parts; `name` and other keys are stripped. */
export const ModelToolMessage = z.object({
  role: z.literal("tool"),
  tool_call_id: ToolMessage.shape.tool_call_id,
  content: ToolResultContent,
});

/** What a frontend may append after the model answered: its reply and tool results. */
export const AppendableMessage = z.discriminatedUnion("role", [ModelAssistantMessage, ModelToolMessage]);
export type AppendableMessage = z.infer<typeof AppendableMessage>;

/** A message's text: its content, or its text parts joined; images are not text. */
export function textOf(message: ChatMessage): string {
  const { content } = message;
  if (content === null) return "";
  return typeof content === "string" ? content : content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n");
}

/** The images a message carries, in order. */
export function imagesOf(message: ChatMessage): ImagePart[] {
  return message.role === "user" && typeof message.content !== "string" ? message.content.filter((p): p is ImagePart => p.type === "image_url") : [];
}

/** A user message's content with its text changed and its images kept. */
export function withText(message: Extract<ChatMessage, { role: "user" }>, text: (current: string) => string): Extract<ChatMessage, { role: "user" }> {
  const images = imagesOf(message);
  return { role: "user", content: images.length ? [{ type: "text", text: text(textOf(message)) }, ...images] : text(textOf(message)) };
}
