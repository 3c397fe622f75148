import { z } from "zod";
import { LIMITS } from "../core/limits";
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

/** What a frontend may append after the model answered: its reply and tool results. */
export const AppendableMessage = z.discriminatedUnion("role", [AssistantMessage.strict(), ToolMessage.strict()]);
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
