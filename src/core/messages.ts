import { z } from "zod";
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

export const SystemMessage = z.object({ role: z.literal("system"), content: z.string() });
export const UserMessage = z.object({ role: z.literal("user"), content: z.string() });
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
