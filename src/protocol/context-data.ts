import * as z from "zod";
import { LIMITS } from "./limits";
import { Text } from "./text";

/** What a provider returns for `getCurrent` / `getById`: the app's state, not yet formatted for a prompt. */
export const ContextData = z.object({
  content: Text(LIMITS.contextContentChars),
  title: Text(LIMITS.titleChars).optional(),
  summary: Text(LIMITS.summaryChars).optional(),
  version: z.string().min(1).max(128).optional(),
  mimeType: z.string().max(128).optional(),
  updatedAt: z.union([z.string().max(64), z.number()]).optional(),
  uri: z.string().max(2048).optional(),
});
export type ContextData = z.infer<typeof ContextData>;

/** One entry of a provider's browsable catalog (`getList`). */
export const ContextListItem = z.object({
  id: z.string().min(1).max(LIMITS.itemIdChars),
  title: z.string().max(LIMITS.titleChars),
  summary: z.string().max(LIMITS.summaryChars).optional(),
  type: z.string().max(64).optional(),
});
export type ContextListItem = z.infer<typeof ContextListItem>;

export const ContextList = z.object({
  items: z.array(ContextListItem).max(LIMITS.listItemsPerPage),
  nextCursor: z.string().max(1024).optional(),
});
export type ContextList = z.infer<typeof ContextList>;
