/**
 * The Conversation object's SQLite, one repository per table (or pair of tables), composed over one `Database`;
 * no policy lives here, and no SQL lives outside the repositories.
 */
import type { Database } from "../storage/database";
import { ApprovalStore } from "./approval-store";
import { AttachmentStore } from "./attachment-store";
import { CompactionStore } from "./compaction-store";
import { DelegationStore } from "./delegation-store";
import { EventStore } from "./event-store";
import { GatewayStore } from "./gateway-store";
import { HistorySearchStore } from "./history-search-store";
import { LedgerStore } from "./ledger-store";
import { McpSessionStore, McpStreamEventStore } from "./mcp-session-store";
import { MessageStore } from "./message-store";
import { MetaStore } from "./meta-store";
import { ResourceStore } from "./resource-store";
import { ToolStateStore } from "./tool-state-store";
import { TurnStore } from "./turn-store";

export type { ConversationMeta } from "./meta-store";
export type { InjectedEntry } from "./ledger-store";
export type { ResourceRecord } from "./resource-store";
export type { TurnRecord } from "./turn-store";

export class ConversationDb {
  /** The `conversation` row: owner, agent, policies, identity, nonce. */
  readonly conversation: MetaStore;
  /** search_history's index: each message joins it as `messages` stores it. */
  readonly searchIndex: HistorySearchStore;
  readonly messages: MessageStore;
  readonly turns: TurnStore;
  readonly events: EventStore;
  readonly ledger: LedgerStore;
  readonly attachments: AttachmentStore;
  readonly resources: ResourceStore;
  readonly approvals: ApprovalStore;
  readonly compactions: CompactionStore;
  readonly delegations: DelegationStore;
  readonly gateway: GatewayStore;
  readonly toolState: ToolStateStore;
  /** MCP sessions served over this conversation, and what each subscribed to. */
  readonly mcp: McpSessionStore;
  /** What each MCP session's stream was sent, for a client that reconnects with Last-Event-ID. */
  readonly mcpEvents: McpStreamEventStore;

  constructor(private readonly db: Database) {
    this.conversation = new MetaStore(db);
    this.searchIndex = new HistorySearchStore(db);
    this.messages = new MessageStore(db, this.searchIndex);
    this.turns = new TurnStore(db);
    this.events = new EventStore(db);
    this.ledger = new LedgerStore(db);
    this.attachments = new AttachmentStore(db);
    this.resources = new ResourceStore(db);
    this.approvals = new ApprovalStore(db);
    this.compactions = new CompactionStore(db);
    this.delegations = new DelegationStore(db);
    this.gateway = new GatewayStore(db);
    this.toolState = new ToolStateStore(db);
    this.mcp = new McpSessionStore(db);
    this.mcpEvents = new McpStreamEventStore(db);
  }

  transaction<T>(run: () => T): T {
    return this.db.transaction(run);
  }
}
