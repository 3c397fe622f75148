import type { z } from "zod";
import type {
  AppendMessagesBody,
  ApprovalDecisionBody,
  Attachment,
  CompactBody,
  ConversationsQuery,
  CreateConversationBody,
  EventsQuery,
  ItemsQuery,
  MessagesQuery,
  RunToolsBody,
  SetMessagesBody,
  TurnBody,
} from "../protocol/http";
import type { CompactionStatus, RequestMessages } from "../protocol/history";
import type { CompactionPolicyInput } from "../protocol/policies";
import type { ContextList } from "../protocol/context-data";
import type {
  AgentList,
  Appended,
  ApprovalDecided,
  ApprovalList,
  ApprovalRequested,
  AttachmentList,
  ClearResult,
  CompactResult,
  ConversationInfo,
  ConversationPage,
  EventPage,
  MessagePage,
  ProblemDocument,
  PastTurn,
  ProviderList,
  ResourceList,
  StoredMessage,
  TurnResult,
} from "../protocol/frontend";
import type { ToolRunResult } from "../protocol/tools";
import type { CompleteDelegationBody, DelegationCompleted, DelegationList } from "../protocol/delegation";

export interface ContextClientOptions {
  /** The runtime's base URL, e.g. `https://context.example.com`. */
  url: string;
  apiKey: string;
  /** Defaults to the platform's `fetch`. */
  fetch?: typeof fetch;
}

/** A non-2xx answer: the runtime's `application/problem+json` document and its status. */
export class ContextRuntimeError extends Error {
  override readonly name = "ContextRuntimeError";
  constructor(
    readonly status: number,
    readonly problem: ProblemDocument,
  ) {
    super(problem.detail ? `${problem.title}: ${problem.detail}` : problem.title);
  }
}

type Query = Record<string, string | number | undefined>;

/** The frontend API (chat UIs, agent loops): conversations, turns, attachments, resources, events. */
export class ContextClient {
  private readonly base: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: ContextClientOptions) {
    this.base = options.url.replace(/\/+$/, "");
    // Called through a closure: browsers reject `fetch` invoked as a method of another object.
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  createConversation(body: z.input<typeof CreateConversationBody> = {}): Promise<Pick<ConversationInfo, "id" | "createdAt" | "agent">> {
    return this.send("POST", "/v1/conversations", { body });
  }

  conversation(id: string): Promise<ConversationInfo> {
    return this.send("GET", conversationPath(id));
  }

  /** One page of the caller's conversations, newest first: ask again with `cursor: nextCursor` while it is not null. */
  conversations(page: Partial<ConversationsQuery> = {}): Promise<ConversationPage> {
    return this.send("GET", "/v1/conversations", { query: page });
  }

  /** A past turn as it was answered: its result, its model input, when, and the usage reported for it. */
  pastTurn(id: string, turnId: string): Promise<PastTurn> {
    return this.send("GET", `${conversationPath(id)}/turns/${encodeURIComponent(turnId)}`);
  }

  async endConversation(id: string): Promise<void> {
    await this.send("DELETE", conversationPath(id));
  }

  turn(id: string, body: z.input<typeof TurnBody>): Promise<TurnResult> {
    return this.send("POST", `${conversationPath(id)}/turns`, { body });
  }

  /** Runs the open calls the runtime serves (apps' tools, search_tools, read_skill, …) outside a turn, and stores their results. */
  runTools(id: string, body: z.input<typeof RunToolsBody> = {}): Promise<ToolRunResult> {
    return this.send("POST", `${conversationPath(id)}/tools/run`, { body });
  }

  /**
   * A subagent's final answer (the model's last message, without tool calls), in the child conversation a `delegate`
   * call started: the child ends, and the answer closes the parent's call (docs/tools.md, "Subagents").
   */
  completeDelegation(childId: string, reply: z.input<typeof CompleteDelegationBody>["reply"]): Promise<DelegationCompleted> {
    return this.send("POST", `${conversationPath(childId)}/delegation/complete`, { body: { reply } });
  }

  /** The conversation's `delegate` calls and the child conversations they started. */
  delegations(id: string): Promise<DelegationList> {
    return this.send("GET", `${conversationPath(id)}/delegations`);
  }

  /** The model's reply and tool results; `usage`, the model's real counts for the reply, lands on the turn's evidence. */
  async appendMessages(id: string, messages: z.input<typeof AppendMessagesBody>["messages"], usage?: z.input<typeof AppendMessagesBody>["usage"]): Promise<void> {
    await this.send("POST", `${conversationPath(id)}/messages`, { body: { messages, ...(usage ? { usage } : {}) } });
  }

  /** One page of the stored messages: those after seq `after` (default 0), at most `limit` (default and most 1,000). */
  messages(id: string, page: Partial<MessagesQuery> = {}): Promise<MessagePage> {
    return this.send("GET", `${conversationPath(id)}/messages`, { query: page });
  }

  /** Every stored message, oldest first, fetched a page at a time. */
  async allMessages(id: string): Promise<StoredMessage[]> {
    const all: StoredMessage[] = [];
    for (let after = 0; ; ) {
      const page = await this.messages(id, { after });
      all.push(...page.messages);
      if (!page.hasMore) return all;
      after = page.nextAfter;
    }
  }

  // ── history: the context-manager contract (docs/history.md) ──

  /** Resumes a history kept elsewhere into a conversation that has no messages yet. */
  setMessages(id: string, messages: z.input<typeof SetMessagesBody>["messages"]): Promise<Appended> {
    return this.send("PUT", `${conversationPath(id)}/messages`, { body: { messages } });
  }

  /** What the model would read before a new message, within `maxTokens`. */
  requestMessages(id: string, maxTokens?: number): Promise<RequestMessages> {
    return this.send("GET", `${conversationPath(id)}/context`, { query: maxTokens === undefined ? {} : { maxTokens } });
  }

  compactionStatus(id: string): Promise<CompactionStatus> {
    return this.send("GET", `${conversationPath(id)}/compaction`);
  }

  setCompactionPolicy(id: string, policy: CompactionPolicyInput): Promise<CompactionStatus> {
    return this.send("PUT", `${conversationPath(id)}/compaction`, { body: policy });
  }

  compact(id: string, body: z.input<typeof CompactBody> = {}): Promise<CompactResult> {
    return this.send("POST", `${conversationPath(id)}/compact`, { body });
  }

  /** Clears the model's view of the history; stored messages stay. */
  clearHistory(id: string): Promise<ClearResult> {
    return this.send("POST", `${conversationPath(id)}/clear`);
  }

  /** The approvals of the calls still open: what to ask the user again after a reconnect. */
  approvals(id: string): Promise<ApprovalList> {
    return this.send("GET", `${conversationPath(id)}/approvals`);
  }

  /** An open call waits for the user's approval: its result is refused until they decide. */
  requestApproval(id: string, toolCallId: string): Promise<ApprovalRequested> {
    return this.send("POST", `${conversationPath(id)}/approvals`, { body: { toolCallId } });
  }

  /** The user's decision. A denial answers the call (the model reads it, with the reason); `seq` is that message's. */
  decideApproval(id: string, toolCallId: string, decision: z.input<typeof ApprovalDecisionBody>): Promise<ApprovalDecided> {
    return this.send("POST", `${conversationPath(id)}/approvals/${encodeURIComponent(toolCallId)}`, { body: decision });
  }

  attach(id: string, attachment: z.input<typeof Attachment>): Promise<AttachmentList> {
    return this.send("POST", `${conversationPath(id)}/attachments`, { body: attachment });
  }

  detach(id: string, attachment: z.input<typeof Attachment>): Promise<AttachmentList> {
    return this.send("DELETE", `${conversationPath(id)}/attachments`, { body: attachment });
  }

  attachments(id: string): Promise<AttachmentList> {
    return this.send("GET", `${conversationPath(id)}/attachments`);
  }

  resources(id: string): Promise<ResourceList> {
    return this.send("GET", `${conversationPath(id)}/resources`);
  }

  async removeResource(id: string, fullId: string): Promise<void> {
    await this.send("DELETE", `${conversationPath(id)}/resources/${encodeURIComponent(fullId)}`);
  }

  /** A provider's catalog (the + menu); `provider` is `app:provider`. */
  browse(id: string, provider: string, query: z.output<typeof ItemsQuery> = {}): Promise<ContextList> {
    return this.send("GET", `${conversationPath(id)}/contexts/${encodeURIComponent(provider)}/items`, { query });
  }

  events(id: string, query: EventsQuery = {}): Promise<EventPage> {
    return this.send("GET", `${conversationPath(id)}/events`, { query });
  }

  agents(): Promise<AgentList> {
    return this.send("GET", "/v1/agents");
  }

  providers(): Promise<ProviderList> {
    return this.send("GET", "/v1/contexts");
  }

  private async send<T>(method: string, path: string, { body, query }: { body?: unknown; query?: Query } = {}): Promise<T> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.options.apiKey}`, Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await this.fetch(`${this.base}${path}${queryString(query)}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new ContextRuntimeError(response.status, problemOf(response, text));
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

function conversationPath(id: string): string {
  return `/v1/conversations/${encodeURIComponent(id)}`;
}

function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** The runtime's problem document; anything else (a proxy's HTML page, say) becomes one. */
function problemOf(response: Response, text: string): ProblemDocument {
  try {
    const problem = JSON.parse(text) as ProblemDocument | null;
    if (typeof problem?.type === "string" && typeof problem.title === "string") return problem;
  } catch {
    // not JSON: described below
  }
  return { type: "about:blank", title: response.statusText || `HTTP ${response.status}`, status: response.status, detail: text.slice(0, 500) };
}
