/**
 * What an app answers when the runtime asks: each provider's functions behind
 * `contexts/current` (several at once: `contexts/currentMany`), `contexts/list` and `contexts/get`, each tool's handler
 * behind `tools/call`, each hook's behind `hooks/call` (hook-requests.ts),
 * with their params and answers validated, and the declarations `initialize` sends.
 */
import * as z from "zod";
import { ContextList, type ContextData } from "../protocol/context-data";
import { ErrorCode, issuesOf, rpcError, rpcResult } from "../protocol/jsonrpc";
import { LIMITS } from "../protocol/limits";
import {
  ContextsCurrentManyParams,
  ContextsCurrentParams,
  ContextsCurrentResult,
  ContextsGetParams,
  ContextsGetResult,
  ContextsListParams,
  ContextsListResult,
  ToolsCallParams,
  ToolsCallResult,
  type ProviderDeclaration,
  type ProviderMethod,
  type ToolDeclaration,
} from "../protocol/methods";
import { answerHookCall, type HooksByName } from "./hook-requests";
import type { Reply } from "./rpc-link";

type Awaitable<T> = T | Promise<T>;

/** sanqian-style pages say whether more follow instead of giving a cursor. */
const HasMorePage = z.object({ items: ContextList.shape.items, hasMore: z.boolean() });

export type CurrentArgs = Omit<z.infer<typeof ContextsCurrentParams>, "provider">;
/** `offset` is the cursor read as a number, for providers that page by offset (0 when the cursor is not one). */
export type ListArgs = Omit<z.infer<typeof ContextsListParams>, "provider"> & { offset: number };
export type ProviderPage = ContextList | z.infer<typeof HasMorePage>;

/** One context an app provides: what the runtime lists in `initialize`, plus the functions that answer it. */
export interface ContextProvider extends Omit<z.input<typeof ProviderDeclaration>, "methods"> {
  getCurrent?: (args: CurrentArgs) => Awaitable<ContextData | null>;
  getList?: (args: ListArgs) => Awaitable<ProviderPage>;
  getById?: (id: string) => Awaitable<ContextData | null>;
}

type ProviderFunction = "getCurrent" | "getList" | "getById";
/** A provider declares exactly the methods it has functions for. */
const METHOD_OF: Record<ProviderFunction, ProviderMethod> = { getCurrent: "current", getList: "list", getById: "get" };

export function declaration({ id, name, description, notifies, ...functions }: ContextProvider): z.input<typeof ProviderDeclaration> {
  const present = (Object.keys(METHOD_OF) as ProviderFunction[]).filter((fn) => typeof functions[fn] === "function");
  return { id, name, description, methods: present.map((fn) => METHOD_OF[fn]), ...(notifies ? { notifies } : {}) };
}

/** Which model call a tool runs for. */
export interface ToolCallInfo {
  conversationId: string;
  toolCallId: string;
}

/**
 * One tool an app serves: its declaration plus the handler that runs it. The handler returns a string
 * (one text part), a CallToolResult (`{content, isError?}`, passed as is) or any other JSON value (sent as
 * its JSON); a thrown error becomes `isError: true` with the message as text, for the model to read.
 */
export interface AppTool extends ToolDeclaration {
  handler: (args: Record<string, unknown>, call: ToolCallInfo) => Awaitable<unknown>;
}

export function toolDeclaration({ handler: _handler, ...declared }: AppTool): ToolDeclaration {
  return declared;
}

type Checked = z.ZodSafeParseResult<unknown>;
export type ProvidersById = ReadonlyMap<string, ContextProvider>;
export type ToolsByName = ReadonlyMap<string, AppTool>;
/** Everything of the app's that the runtime may call. */
export interface AppHandlers {
  providers: ProvidersById;
  tools: ToolsByName;
  hooks: HooksByName;
  /** A provider answered with data the protocol refuses: the runtime is told it failed, and the app's developer this. */
  invalidAnswer: (message: string) => void;
}

/** The runtime's requests to the app: validate params, find the provider or tool, call it, check what it returned. */
export const RUNTIME_REQUESTS: Record<string, (handlers: AppHandlers, params: unknown) => Promise<Reply>> = {
  "hooks/call": ({ hooks }, raw) => answerHookCall(hooks, raw),
  "tools/call": async ({ tools }, raw) => {
    const params = ToolsCallParams.safeParse(raw);
    if (!params.success) return failure(ErrorCode.InvalidParams, "invalid params", { issues: issuesOf(params.error) });
    const { name, arguments: args, conversationId, toolCallId } = params.data;
    const tool = tools.get(name);
    if (!tool) return failure(ErrorCode.InvalidParams, `unknown tool '${name}'`);
    let result: ToolsCallResult;
    try {
      result = toCallToolResult(await tool.handler(args, { conversationId, toolCallId }));
    } catch (error) {
      result = { content: [{ type: "text", text: error instanceof Error ? error.message : String(error) }], isError: true };
    }
    return (id) => rpcResult(id, result);
  },
  "contexts/current": async (handlers, raw) => reply(await current(handlers, raw)),
  "contexts/currentMany": (handlers, raw) => currentMany(handlers, raw),
  "contexts/get": async (handlers, raw) =>
    reply(
      await callProvider(handlers, ContextsGetParams, raw, "getById", async (provider, { id }) =>
        ContextsGetResult.safeParse((await provider.getById(id)) ?? null),
      ),
    ),
  "contexts/list": async (handlers, raw) =>
    reply(
      await callProvider(handlers, ContextsListParams, raw, "getList", async (provider, { query, cursor, limit }) => {
        const offset = offsetOf(cursor);
        return toContextList(await provider.getList({ query, cursor, limit, offset }), offset);
      }),
    ),
};

function current(handlers: AppHandlers, raw: unknown): Promise<Outcome> {
  return callProvider(handlers, ContextsCurrentParams, raw, "getCurrent", async (provider, { conversationId }) =>
    ContextsCurrentResult.safeParse((await provider.getCurrent({ conversationId })) ?? null),
  );
}

/**
 * What an answer to `contexts/currentMany` may hold, with room for its frame: the runtime reads at most frameChars
 * characters in a frame, and the platform carries at most 1 MiB of UTF-8 in one WebSocket message.
 */
const MANY_ANSWER = { chars: LIMITS.frameChars - 1024, bytes: 1_048_576 - 4096 } as const;
const utf8 = new TextEncoder();

/**
 * Several providers' current state in one answer, each as `contexts/current` would answer it, all asked at once. One
 * not answered within the request's deadline is a timeout; one that would push the answer past a frame's size is
 * answered `TooLarge`, and the runtime asks it alone.
 */
async function currentMany(handlers: AppHandlers, raw: unknown): Promise<Reply> {
  const params = ContextsCurrentManyParams.safeParse(raw);
  if (!params.success) return failure(ErrorCode.InvalidParams, "invalid params", { issues: issuesOf(params.error) });
  const { requests, deadlineMs } = params.data;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve(failed(ErrorCode.Timeout, `no answer within ${deadlineMs} ms`)), deadlineMs);
  });
  const outcomes = await Promise.all(requests.map((request) => Promise.race([current(handlers, request), late])));
  clearTimeout(timer);
  let [chars, bytes] = [0, 0];
  const answers = outcomes.map((outcome): Outcome => {
    const text = JSON.stringify(outcome);
    const size = { chars: text.length, bytes: utf8.encode(text).length };
    if (chars + size.chars > MANY_ANSWER.chars || bytes + size.bytes > MANY_ANSWER.bytes) return failed(ErrorCode.TooLarge, "this answer does not fit in one frame with the others: ask it alone");
    chars += size.chars;
    bytes += size.bytes;
    return outcome;
  });
  return (id) => rpcResult(id, { answers });
}

function hasFunction<F extends ProviderFunction>(
  provider: ContextProvider,
  fn: F,
): provider is ContextProvider & Required<Pick<ContextProvider, F>> {
  return typeof provider[fn] === "function";
}

async function callProvider<S extends z.ZodType<{ provider: string }>, F extends ProviderFunction>(
  { providers, invalidAnswer }: AppHandlers,
  schema: S,
  raw: unknown,
  fn: F,
  call: (provider: ContextProvider & Required<Pick<ContextProvider, F>>, params: z.infer<S>) => Promise<Checked>,
): Promise<Outcome> {
  const params = schema.safeParse(raw);
  if (!params.success) return failed(ErrorCode.InvalidParams, "invalid params", { issues: issuesOf(params.error) });
  const provider = providers.get(params.data.provider);
  if (!provider) return failed(ErrorCode.NotFound, `unknown provider '${params.data.provider}'`);
  if (!hasFunction(provider, fn)) return failed(ErrorCode.MethodNotFound, `provider '${provider.id}' has no ${fn}`);
  let checked: Checked;
  try {
    checked = await call(provider, params.data);
  } catch (error) {
    return failed(ErrorCode.InternalError, error instanceof Error ? error.message : String(error));
  }
  if (checked.success) return { result: checked.data };
  const issues = issuesOf(checked.error);
  const detail = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  invalidAnswer(`provider '${provider.id}' ${fn} returned invalid data, so the runtime reports the context missing: ${detail}`);
  return failed(ErrorCode.InternalError, `provider returned invalid data: ${detail}`, { issues });
}

/** A request's outcome, before it is framed with its id: what `contexts/currentMany` lists for each of its requests. */
type Outcome = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

function failed(code: ErrorCode, message: string, data?: unknown): Outcome {
  return { error: { code, message, ...(data === undefined ? {} : { data }) } };
}

function reply(outcome: Outcome): Reply {
  return "result" in outcome ? (id) => rpcResult(id, outcome.result) : failure(outcome.error.code as ErrorCode, outcome.error.message, outcome.error.data);
}

export function failure(code: ErrorCode, message: string, data?: unknown): Reply {
  return (id) => rpcError(id, code, message, data);
}

function offsetOf(cursor: string | undefined): number {
  return cursor !== undefined && /^\d+$/.test(cursor) ? Number(cursor) : 0;
}

/** With `hasMore`, the next cursor is the offset after this page. */
function toContextList(page: unknown, offset: number): Checked {
  const hasMore = HasMorePage.safeParse(page);
  if (!hasMore.success) return ContextsListResult.safeParse(page);
  const { items } = hasMore.data;
  return ContextsListResult.safeParse(hasMore.data.hasMore ? { items, nextCursor: String(offset + items.length) } : { items });
}

/** A handler's return as MCP's CallToolResult: a string is one text part, a CallToolResult passes, anything else is its JSON. */
function toCallToolResult(value: unknown): ToolsCallResult {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  if (value === undefined) return { content: [] };
  if (typeof value === "object" && value !== null && "content" in value) {
    const result = ToolsCallResult.safeParse(value);
    if (result.success) return result.data;
  }
  const json = JSON.stringify(value);
  if (json === undefined) throw new Error(`the tool returned a ${typeof value}, which has no JSON`);
  return { content: [{ type: "text", text: json }] };
}
