/**
 * Every size the runtime accepts, in one place. Chosen so that one stored row
 * (a user message plus its reminder appendix) stays well under Durable Object
 * SQLite's 2 MB row limit even when every character is four UTF-8 bytes.
 */
export const LIMITS = {
  /** HTTP request body, bytes: room for a 1 MiB tool output and its JSON escaping. */
  httpBodyBytes: 2_097_152,
  /**
   * One WebSocket text frame, in characters. Half the platform's 1 MiB message
   * limit, so a frame the runtime can still read gets a clear error rather than
   * a closed socket; a 100,000-character context fits with room to spare.
   */
  frameChars: 524_288,
  /** A user or assistant message's text. */
  messageChars: 64_000,
  /** A tool result as the frontend sends it; it is redacted and trimmed (to ~800 tokens by default) before it is stored. */
  toolResultChars: 1_048_576,
  /** Tool results riding in one turn. */
  toolResultsPerTurn: 64,
  /** Artifact refs in one turn's task state. */
  taskStateRefs: 32,
  /** Content of one context an app returns, or one pushed resource (as sanqian-notes caps its pushes). */
  contextContentChars: 100_000,
  /** All context and resource text injected into one turn's reminder. */
  appendixChars: 400_000,
  titleChars: 200,
  summaryChars: 2_000,
  /** Names of apps, providers and agents. */
  nameChars: 64,
  itemIdChars: 256,
  systemPromptChars: 32_000,
  attachmentsPerConversation: 32,
  resourcesPerConversation: 32,
  attachedContextsPerAgent: 32,
  /** MCP sessions one conversation serves at once (docs/mcp.md): the oldest ends when a new one would pass it. */
  mcpSessionsPerConversation: 16,
  /** Resources one MCP session subscribes to. */
  mcpSubscriptionsPerSession: 64,
  /** What an MCP session's stream was sent, kept for a client that reconnects with Last-Event-ID: its last this many. */
  mcpStreamEventsPerSession: 64,
  providersPerApp: 64,
  /** How much longer than the providers' deadline the runtime waits for an answer to `contexts/currentMany`: its way there and back. */
  currentManyMarginMs: 250,
  agentsPerApp: 64,
  toolsPerAgent: 128,
  /** A tool's description, which the model reads to decide whether to call it. */
  toolDescriptionChars: 2_048,
  /** A tool's `inputSchema` as JSON. Every declaration of an app rides in its one `initialize` frame (frameChars). */
  toolSchemaChars: 16_384,
  /** Tools one conversation loads from its catalog with search_tools: each joins every later turn's tool list. */
  loadedToolsPerConversation: 64,
  /** search_history (docs/tools.md): a query's characters, and the hits one call lists at most (5 unless it asks). */
  historySearchQueryChars: 512,
  historySearchHits: 10,
  /**
   * A search_history hit's excerpt, in characters (about: it ends at whole sentences). A result's excerpts share
   * historySearchResultChars, so ten hits fit the default trim policy (800 tokens) and none is trimmed away.
   */
  historySearchExcerptChars: 400,
  historySearchResultChars: 2_400,
  /** Skills one app declares (an agent names at most as many skill patterns). */
  skillsPerApp: 64,
  /** A skill's description: the one line the model's skills menu shows. */
  skillDescriptionChars: 1_024,
  /**
   * A skill's manual (markdown), and each of its references. Manuals ride in the `initialize` frame, so all of an
   * app's skills together must fit in frameChars; the runtime keeps them in R2, not in the hub's SQLite.
   */
  skillManualChars: 65_536,
  /** References (extra documents a model may read) one skill carries. */
  skillReferencesPerSkill: 8,
  messagesPerAppend: 64,
  /** Files one user message says were uploaded (`uploads`): the note names each, never its content. */
  uploadsPerMessage: 16,
  /** Items one user message @-mentions (`mentions`): each is read through its provider's `get` for that turn. */
  mentionsPerMessage: 8,
  /** A mentioned item's content, in characters, as its note shows it (after the trust boundary). */
  mentionContentChars: 8_000,
  /** Names, topics or words one agent's `dontMention` lists, and each one's characters. */
  dontMentionPerAgent: 32,
  dontMentionChars: 200,
  /** Images one user message may carry (by URL). */
  imagesPerMessage: 8,
  /** Messages one resume may carry (the body limit applies too). */
  messagesPerResume: 10_000,
  listItemsPerPage: 100,
  /**
   * Stored messages one request reads, weighed as their text in UTF-8 bytes (never fewer than its characters)
   * plus 128 bytes a message: a page of GET …/messages, or the history a turn or GET …/context loads. About a
   * million tokens, more than any model reads at once; a reply is at most twice this on the wire, far below
   * the Durable Object's 32 MiB RPC limit.
   */
  historyReadBytes: 4_194_304,
  /** One turn's whole model input, in characters (at most 2 bytes each over RPC): its history plus this turn's own parts. */
  modelInputChars: 8_388_608,
  /**
   * A conversation's stored messages, weighed as historyReadBytes weighs them. Stored messages are never
   * deleted, so past it new messages are refused while reads, compaction, clear and ending keep working.
   */
  conversationBytes: 67_108_864,
  /** Messages in one page of GET …/messages, by default and at most (a page also stops at historyReadBytes). */
  messagesPerPage: 1_000,
  /**
   * How deep subagents nest (docs/tools.md, "Subagents"): a conversation started by `delegate` is one level below its
   * parent; a `delegate` call in a conversation already this deep is answered with an error the model reads.
   */
  subagentDepth: 3,
  /** Subagents one agent names (`subagents`). */
  subagentsPerAgent: 16,
  /** A `delegate` call's `task`, and its `context`, in characters. */
  delegateTaskChars: 16_000,
  delegateContextChars: 16_000,
  /** Folders one app mounts (`initialize.mounts`), and a mount's path in characters. */
  mountsPerApp: 16,
  mountPathChars: 512,
  /** Hooks one app registers (docs/hooks.md). */
  hooksPerApp: 32,
  /** How long a hook's answer is waited for when its declaration does not say, and the most it may ask for. */
  hookDeadlineMs: 500,
  hookDeadlineMaxMs: 10_000,
  /** Text a hook adds (a memory entry, a block, a summary), each, in characters; a block shown to a hook is cut there too. */
  hookTextChars: 8_000,
  /** How many times the gateway asks the model again after an output hook rejected its answer. */
  outputRegenerations: 2,
} as const;
