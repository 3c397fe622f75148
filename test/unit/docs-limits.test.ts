/**
 * The limits README.md and docs/protocol.md state are the ones the code enforces.
 * Every number README's Limits section states must be mapped below (phrase →
 * value in code), so a new limit written there fails here until it is mapped,
 * and a wrong number fails at once.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ARTIFACT_LIMITS } from "../../src/protocol/artifact-limits";
import { ContextList } from "../../src/protocol/context-data";
import { LIMITS } from "../../src/protocol/limits";
import { MCP_CONSUME_LIMITS } from "../../src/protocol/mcp-servers";
import { ImagePart } from "../../src/protocol/messages";
import { PROBLEMS } from "../../src/core/problem";
import { providerDeadlineMs, toolDeadlineMs } from "../../src/platform/config";
import type { Env } from "../../src/platform/env";
import { MEMORY_LIMITS } from "../../src/memory/limits";
import { TrimPolicy } from "../../src/protocol/policies";
import { JsonRpcId, JsonRpcRequest } from "../../src/protocol/jsonrpc";
import { ContextsCurrentManyParams, ContextsListParams, ProviderDeclaration, ResourceId } from "../../src/protocol/methods";

/** A stated value is right when it equals the code's number, or is exactly the boundary a schema enforces. */
type Expected = number | ((stated: number) => boolean);

/** The largest `n` that `accepts` takes: it takes `n` and refuses `n + 1`. */
const maxOf = (accepts: (n: number) => boolean) => (n: number) => accepts(n) && !accepts(n + 1);
const minOf = (accepts: (n: number) => boolean) => (n: number) => accepts(n) && !accepts(n - 1);
const chars = (schema: { safeParse(v: unknown): { success: boolean } }, wrap: (s: string) => unknown = (s) => s) => (n: number) =>
  n >= 0 && schema.safeParse(wrap("a".repeat(n))).success;
const METHODS = ["current", "list", "get"] as const;
const methods = (n: number) => n >= 0 && ProviderDeclaration.safeParse({ id: "p", name: "P", methods: Array.from({ length: n }, (_, i) => METHODS[i % 3]) }).success;
const imageUrl = (n: number) => {
  const prefix = "https://img.example/";
  return n >= prefix.length && ImagePart.safeParse({ type: "image_url", image_url: { url: prefix + "a".repeat(n - prefix.length) } }).success;
};

const EXPECTED: Record<string, Expected> = {
  ...LIMITS,
  "memory.textChars": MEMORY_LIMITS.textChars,
  "mcp.serversPerUser": MCP_CONSUME_LIMITS.serversPerUser,
  "mcp.serversPerApp": MCP_CONSUME_LIMITS.serversPerApp,
  "artifact.dataBytes": ARTIFACT_LIMITS.dataBytes,
  "status.payloadTooLarge": PROBLEMS["payload-too-large"].status,
  "trimPolicy.maxTokens": maxOf((n) => TrimPolicy.safeParse({ maxTokens: n }).success),
  "image.urlChars": maxOf(imageUrl),
  "providerDeadlineMs": providerDeadlineMs({} as Env),
  "toolDeadlineMs": toolDeadlineMs({} as Env),
  "hookDeadlineMaxS": LIMITS.hookDeadlineMaxMs / 1000,
  "jsonrpc.idChars.min": minOf(chars(JsonRpcId)),
  "jsonrpc.idChars.max": maxOf(chars(JsonRpcId)),
  "jsonrpc.methodChars.min": minOf(chars(JsonRpcRequest, (method) => ({ jsonrpc: "2.0", id: 1, method }))),
  "jsonrpc.methodChars.max": maxOf(chars(JsonRpcRequest, (method) => ({ jsonrpc: "2.0", id: 1, method }))),
  "methods.min": minOf(methods),
  "methods.max": maxOf(methods),
  "resourceIdChars": maxOf(chars(ResourceId)),
  "list.queryChars": maxOf(chars(ContextsListParams, (query) => ({ provider: "p", query }))),
  "list.cursorChars": maxOf(chars(ContextsListParams, (cursor) => ({ provider: "p", cursor }))),
  "list.nextCursorChars": maxOf(chars(ContextList, (nextCursor) => ({ items: [], nextCursor }))),
  "currentMany.requests.max": maxOf((n) => n >= 0 && ContextsCurrentManyParams.safeParse({ requests: Array.from({ length: n }, () => ({ provider: "p", conversationId: "conv-0001" })), deadlineMs: 1 }).success),
  "currentMany.deadlineMs.max": maxOf((n) => ContextsCurrentManyParams.safeParse({ requests: [{ provider: "p", conversationId: "conv-0001" }], deadlineMs: n }).success),
  /** The platform's, not ours: Durable Object SQLite's row limit and Workers' WebSocket message limit. */
  "platform.sqliteRowBytes": 2_000_000,
  "platform.websocketMessageBytes": 1_048_576,
};

/** Every phrase of README's Limits section that states a number; `{key}` is the number, checked against EXPECTED. */
const README_PHRASES = [
  "HTTP bodies {httpBodyBytes} ({status.payloadTooLarge})",
  "WebSocket frames {frameChars} characters",
  "messages {messageChars} characters",
  "a raw tool result {toolResultChars} characters",
  "{toolResultsPerTurn} tool results and {taskStateRefs} task-state refs per turn",
  "a memory {memory.textChars} characters",
  "an artifact {artifact.dataBytes} bytes",
  "a context's or resource's content {contextContentChars} characters",
  "a trim policy's `maxTokens` {trimPolicy.maxTokens}",
  "SQLite's {platform.sqliteRowBytes}",
  "{imagesPerMessage} images per message (https URLs of ≤ {image.urlChars} characters)",
  "{messagesPerResume} messages per resume",
  "the reminder appendix {appendixChars} characters per turn",
  "{attachmentsPerConversation} attachments and {resourcesPerConversation} resources per conversation",
  "{providersPerApp} providers, {agentsPerApp} agents and {hooksPerApp} hooks per app (a hook waits {hookDeadlineMs} ms by default, at most {hookDeadlineMaxS} s)",
  "{listItemsPerPage} items per list page",
  "a `search_history` query {historySearchQueryChars} characters and {historySearchHits} hits",
  "pages of at most {messagesPerPage} messages",
  "reads at most {historyReadBytes} of a conversation's history",
  "a turn's model input {modelInputChars} characters",
  "{loadedToolsPerConversation} catalog tools loaded per conversation",
  "{mcpSessionsPerConversation} MCP sessions per conversation (with {mcpSubscriptionsPerSession} subscriptions and their stream's last {mcpStreamEventsPerSession} events each)",
  "{mcp.serversPerUser} MCP servers a user registers and {mcp.serversPerApp} an app declares",
  "a conversation's stored messages {conversationBytes}",
];

/** docs/protocol.md's limits table: every row, its "Limit" cell in full. */
const PROTOCOL_TABLE: Record<string, string> = {
  "WebSocket text frame": "{frameChars} UTF-16 chars (runtime); keep under {platform.websocketMessageBytes} UTF-8 (platform)",
  "JSON-RPC id (string)": "{jsonrpc.idChars.min}–{jsonrpc.idChars.max} chars; or any integer",
  "JSON-RPC `method`": "{jsonrpc.methodChars.min}–{jsonrpc.methodChars.max} chars",
  "App, provider, agent, tool name": "{nameChars} chars, `^[A-Za-z0-9][A-Za-z0-9._-]*$`",
  "Providers per app (`initialize.contexts`)": "{providersPerApp}",
  "`methods` per provider": "{methods.min}–{methods.max}",
  "Tools per app (`initialize.tools`) / per agent": "{toolsPerAgent}",
  "Tool `description`": "{toolDescriptionChars} chars",
  "Tool `inputSchema` as JSON": "{toolSchemaChars} chars",
  "Skills per app (`initialize.skills`) / skill patterns per agent": "{skillsPerApp}",
  "Skill `description`": "1–{skillDescriptionChars} chars",
  "Skill `manual`, each reference's `content`": "{skillManualChars} chars",
  "References per skill": "{skillReferencesPerSkill}",
  "Agents per app (`initialize.agents`, and in total)": "{agentsPerApp}",
  "`attachedContexts` per agent": "{attachedContextsPerAgent}",
  "System prompt": "{systemPromptChars} chars",
  "Titles (`name`, `title`, `displayName`)": "{titleChars} chars",
  "Descriptions, summaries": "{summaryChars} chars",
  "ContextData / resource `content`": "{contextContentChars} chars",
  "Context + resource text injected in one turn": "{appendixChars} chars",
  "Resources per conversation": "{resourcesPerConversation}",
  "Resource `id`": "{resourceIdChars} chars",
  "Attachments per conversation (user side)": "{attachmentsPerConversation}",
  "Item id (`contexts/get` `id`, `items[].id`)": "{itemIdChars} chars",
  "List page (`limit`, `items`)": "{listItemsPerPage}",
  "`query` / `cursor` / `nextCursor`": "{list.queryChars} / {list.cursorChars} / {list.nextCursorChars} chars",
  "Provider answer deadline":
    "{providerDeadlineMs} ms (`PROVIDER_DEADLINE_MS` in `wrangler.toml` `[vars]`; any positive number, else {providerDeadlineMs})",
  "`contexts/currentMany`":
    "1–{currentMany.requests.max} `requests`; `deadlineMs` the provider deadline in whole ms, at most {currentMany.deadlineMs.max} ms (below 1 ms, no `currentMany` is sent); the runtime waits {currentManyMarginMs} ms more for the answer, which must fit one frame",
  "Tool answer deadline": "{toolDeadlineMs} ms (`TOOL_DEADLINE_MS` in `wrangler.toml` `[vars]`; any positive number, else {toolDeadlineMs})",
  "Mounts per app (`initialize.mounts`); a mount's `path`": "{mountsPerApp}; {mountPathChars} chars",
  "Hooks per app (`initialize.hooks`)": "{hooksPerApp}",
  "Hook answer deadline (`deadlineMs`)": "{hookDeadlineMs} ms by default; at most {hookDeadlineMaxMs} ms",
  "Text a hook adds (a memory entry, a block's `content`, a summary); a block's text shown to a hook": "{hookTextChars} chars",
  "Regenerations after an `output` hook rejects (gateway)": "{outputRegenerations}",
};

/** Limits docs/protocol.md states in its prose; each phrase must occur, and every occurrence must be right. */
const PROTOCOL_PROSE = [
  "A text frame longer than {frameChars} characters",
  "frame over {frameChars} characters",
  "Provider deadline | {providerDeadlineMs} ms per call by default",
  "Tool deadline | {toolDeadlineMs} ms per call by default",
  "a tool call waits at most {toolDeadlineMs} ms by default",
  "must fit in {frameChars} characters",
  "default {providerDeadlineMs} ms from when the runtime sends the call",
  "an app may register at most {agentsPerApp} agents",
  "**Limit.** {resourcesPerConversation} resources per conversation",
];

/** A stated number: digits with thousands commas, optionally a binary or decimal unit after a space. */
const NUMBER = String.raw`\d[\d,]*(?: (?:KiB|MiB|Ki|Mi|MB|KB))?`;
const UNITS: Record<string, number> = { Ki: 1024, KiB: 1024, Mi: 1024 ** 2, MiB: 1024 ** 2, KB: 1000, MB: 1000 ** 2 };

function valueOf(stated: string): number {
  const [digits, unit] = stated.split(" ");
  expect(digits, `'${stated}' is not a well-formed number`).toMatch(/^\d{1,3}(,\d{3})*$|^\d+$/);
  return Number(digits!.replace(/,/g, "")) * (unit ? UNITS[unit]! : 1);
}

function expectStated(key: string, stated: string, where: string): void {
  const expected = EXPECTED[key];
  if (expected === undefined) throw new Error(`${where}: no value in code is mapped to '{${key}}'`);
  const value = valueOf(stated);
  if (typeof expected === "number") expect(value, `${where}: {${key}} is stated as ${stated}`).toBe(expected);
  else expect(expected(value), `${where}: {${key}} is stated as ${stated}, which is not the boundary the code enforces`).toBe(true);
}

interface Match {
  start: number;
  end: number;
}

/** Finds a phrase in `text` (whitespace-insensitive) and checks its numbers; returns where each number was. */
function checkPhrase(text: string, phrase: string, where: string, options: { anchored?: boolean; all?: boolean } = {}): Match[] {
  const keys: string[] = [];
  const source = phrase
    .split(/(\{[^}]+\})/)
    .map((part) => {
      if (/^\{[^}]+\}$/.test(part)) {
        keys.push(part.slice(1, -1));
        return `(${NUMBER})`;
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\s+/g, "\\s+");
    })
    .join("");
  const pattern = new RegExp(options.anchored ? `^${source}$` : source, "gd");
  const matches = [...text.matchAll(pattern)];
  expect(matches.length, `${where} no longer says "${phrase}": update the mapping in this test`).toBeGreaterThan(0);
  if (!options.all) expect(matches.length, `${where} says "${phrase}" more than once`).toBe(1);
  return matches.flatMap((m) =>
    keys.map((key, i) => {
      expectStated(key, m[i + 1]!, where);
      const [start, end] = m.indices![i + 1]!;
      return { start, end };
    }),
  );
}

/** Every number in `text` that is not part of a word, a code pattern or a version. */
function numbersIn(text: string): Match[] {
  return [...text.matchAll(new RegExp(`(?<![\\w.\\-/])${NUMBER}(?![\\w-])`, "gd"))].map((m) => ({ start: m.index, end: m.index + m[0].length }));
}

function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  expect(start, `no '${heading}' section`).toBeGreaterThanOrEqual(0);
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(/\n## /);
  return end === -1 ? rest : rest.slice(0, end);
}

const README = readFileSync("README.md", "utf8");
const PROTOCOL = readFileSync("docs/protocol.md", "utf8");

describe("the limits the docs state are the code's", () => {
  it("README's Limits section: every number it states is mapped and right", () => {
    const limits = section(README, "## Limits").replace(/\s+/g, " ");
    const checked = README_PHRASES.flatMap((phrase) => checkPhrase(limits, phrase, "README.md ## Limits"));
    const unmapped = numbersIn(limits).filter((n) => !checked.some((c) => c.start <= n.start && n.end <= c.end));
    const context = (n: Match) => `"…${limits.slice(Math.max(0, n.start - 40), n.end + 20)}…"`;
    expect(unmapped.map(context), "numbers README's Limits states that this test cannot map to a limit: add them to README_PHRASES").toEqual([]);
  });

  it("docs/protocol.md's limits table: every row is mapped, its limit cell exactly as the code enforces", () => {
    const table = section(PROTOCOL, "## 8. Limits");
    const rows = table
      .split("\n")
      .filter((line) => line.startsWith("| ") && !/^\| What \||^\|---/.test(line))
      .map((line) => line.slice(2, -2).split(" | "));
    expect(rows.map(([what]) => what)).toEqual(Object.keys(PROTOCOL_TABLE));
    for (const [what, limit] of rows) checkPhrase(limit!, PROTOCOL_TABLE[what!]!, `docs/protocol.md limits table, '${what}'`, { anchored: true });
  });

  it("docs/protocol.md's prose states the same limits", () => {
    const text = PROTOCOL.replace(/\s+/g, " ");
    for (const phrase of PROTOCOL_PROSE) checkPhrase(text, phrase, "docs/protocol.md", { all: true });
  });
});
