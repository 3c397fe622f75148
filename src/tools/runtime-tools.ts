import { LIMITS } from "../protocol/limits";

/**
 * The tools the runtime serves itself, as the model sees them. Their names never contain `__`, so they cannot
 * collide with an app's tool (always `app__tool`).
 */
export const RUNTIME_TOOLS = {
  search_tools: {
    description:
      "Find more tools by what they do. Describe the action in a few words (e.g. 'create a calendar event', 'send an email') or give an exact tool name. The best matches join your tool list and stay there for the rest of the conversation.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "What the tool should do, or its exact name; 'select:a,b' loads those names.", minLength: 1, maxLength: 512 },
        limit: { type: "integer", description: "How many tools to load at most (default 5).", minimum: 1, maximum: 10 },
      },
      required: ["query"],
      additionalProperties: false,
    },
  },
  search_history: {
    description:
      "Search every earlier message of this conversation, those a summary replaced included, by the words it would contain (a name, a number, a term). Each hit: the message's number, who wrote it, when, and an excerpt.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "Words the message would contain.", minLength: 1, maxLength: LIMITS.historySearchQueryChars },
        limit: { type: "integer", description: "How many messages to show at most (default 5).", minimum: 1, maximum: LIMITS.historySearchHits },
      },
      required: ["query"],
      additionalProperties: false,
    },
  },
  read_skill: {
    description: "Read a skill's manual (and its references) before doing the kind of task it covers. The skills menu in the system message lists the skills by name.",
    parameters: {
      type: "object",
      properties: { name: { type: "string", description: "The skill's name as the menu shows it (app:skill).", minLength: 1, maxLength: 129 } },
      required: ["name"],
      additionalProperties: false,
    },
  },
  list_contexts: {
    description:
      "List what the user's apps can show you: without a provider, the providers you can browse; with one, its items (optionally matching a query). Read one with read_context.",
    parameters: {
      type: "object",
      properties: {
        provider: { type: "string", description: "A provider (app:provider) from an earlier list_contexts.", maxLength: 129 },
        query: { type: "string", description: "Words to match in the provider's items.", maxLength: 512 },
      },
      additionalProperties: false,
    },
  },
  read_context: {
    description: "Read one context from the user's apps: a provider's current state, or one of its items by id (from list_contexts).",
    parameters: {
      type: "object",
      properties: {
        provider: { type: "string", description: "The provider (app:provider).", minLength: 3, maxLength: 129 },
        id: { type: "string", description: "An item id from list_contexts; leave it out for the provider's current state.", maxLength: 256 },
      },
      required: ["provider"],
      additionalProperties: false,
    },
  },
  delegate: {
    description:
      "Hand a self-contained task to one of your subagents. It starts fresh, with its own instructions and tools: it sees none of this conversation, only the task and the context you pass, so put in them everything it needs. Only its final answer comes back, as this call's result.",
    parameters: {
      type: "object",
      properties: {
        agent: { type: "string", description: "The subagent, as app:agent.", minLength: 3, maxLength: 129 },
        task: { type: "string", description: "What the subagent should do and what it should answer with, in full sentences.", minLength: 1, maxLength: LIMITS.delegateTaskChars },
        context: { type: "string", description: "Facts from this conversation the subagent needs (it reads them as hints, not instructions).", maxLength: LIMITS.delegateContextChars },
      },
      required: ["agent", "task"],
      additionalProperties: false,
    },
  },
} as const;

export type RuntimeToolName = keyof typeof RUNTIME_TOOLS;

export function isRuntimeTool(name: string): name is RuntimeToolName {
  return Object.hasOwn(RUNTIME_TOOLS, name);
}
