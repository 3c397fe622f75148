import { z } from "zod";
import { LIMITS } from "../core/limits";
import { AppendableMessage } from "../core/messages";
import { QualifiedName } from "../core/names";

/** Bodies and query strings of the frontend API (DESIGN §4). */
export const Attachment = z
  .object({
    context: QualifiedName,
    itemId: z.string().min(1).max(LIMITS.itemIdChars).optional(),
  })
  .strict();
export type Attachment = z.infer<typeof Attachment>;

export const CreateConversationBody = z.object({ agent: QualifiedName.optional() }).strict();

export const TurnId = z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, "1-128 letters, digits, '_', '.', ':' or '-'");

export const TurnBody = z
  .object({
    turnId: TurnId.optional(),
    agent: QualifiedName,
    message: z.string().min(1).max(LIMITS.messageChars),
    attachments: z.array(Attachment).max(LIMITS.attachmentsPerConversation).optional(),
  })
  .strict();
export type TurnBody = z.infer<typeof TurnBody>;

export const AppendMessagesBody = z
  .object({ messages: z.array(AppendableMessage).min(1).max(LIMITS.messagesPerAppend) })
  .strict();
export type AppendMessagesBody = z.infer<typeof AppendMessagesBody>;

export const ItemsQuery = z
  .object({
    query: z.string().max(512).optional(),
    cursor: z.string().max(1024).optional(),
    limit: z.coerce.number().int().min(1).max(LIMITS.listItemsPerPage).optional(),
  })
  .strict();

export const EventsQuery = z
  .object({
    after: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(500).optional(),
  })
  .strict();
export type EventsQuery = z.infer<typeof EventsQuery>;
