import * as z from "zod";
import { conversationInbox } from "./port";
import type { Env } from "../platform/env";
import { qualify, splitQualified } from "../protocol/names";
import { ErrorCode, issuesOf } from "../protocol/jsonrpc";
import {
  AgentDefinition,
  ContextsChangedParams,
  InitializeParams,
  PROTOCOL_VERSION,
  ResourcePushParams,
  ResourceRemoveParams,
} from "../protocol/methods";
import { checkSchema } from "../tools/validate";
import type { Result } from "../core/problem";
import type { McpServerDeclaration } from "../protocol/mcp-servers";
import type { Registry } from "./registry";
import { deleteSkills, writeSkills } from "./skill-store";
import { problemToRpc, type RpcFailure } from "./rpc-errors";
import { saveSession, type SocketSession } from "./socket-session";

export type RpcOutcome = { result: unknown } | { error: RpcFailure };

export interface AppRequestContext {
  env: Env;
  registry: Registry;
  ws: WebSocket;
  session: SocketSession;
  /**
   * The app (re)initialised: the hub updates what it derives from its tools (their vectors, in the background) and
   * forgets what it kept of its providers' answers.
   */
  initialized: (app: string) => void;
  /** An app's provider says its context changed: the conversations watching it are told (src/hub/context-watchers.ts). */
  contextChanged: (ref: string) => void;
  /** The app's MCP servers (`initialize.mcpServers`): refused whole when a name is taken, else they replace its last. */
  declareMcpServers: (app: string, servers: readonly McpServerDeclaration[]) => Result<true>;
}

type Handler = (ctx: AppRequestContext, params: unknown) => Promise<RpcOutcome> | RpcOutcome;

/** The methods an app may call, each validating its params before touching state. */
const HANDLERS: Record<string, Handler> = {
  initialize: (ctx, raw) =>
    withParams(InitializeParams, raw, async (params) => {
      const app = params.app.name;
      if (app !== ctx.session.app) {
        return failure(ErrorCode.Forbidden, `this token is for app '${ctx.session.app}', not '${app}'`);
      }
      // The protocol checked each input schema's shape; here it is checked as JSON Schema, before anything is registered.
      const broken = schemaIssues(params.tools);
      if (broken.length > 0) return failure(ErrorCode.InvalidParams, "invalid params", { issues: broken });
      const owner = ctx.registry.identity();
      if (!owner) return failure(ErrorCode.InternalError, "the hub does not know its owner yet; reconnect");
      const servers = ctx.declareMcpServers(app, params.mcpServers);
      if (!servers.ok) return { error: problemToRpc(servers.problem) };
      // Manuals go to R2 first (only the changed ones), so a registered skill always has its manual there.
      const before = ctx.registry.skills(app);
      const digests = await writeSkills(ctx.env.ARTIFACTS, owner, app, params.skills, new Map(before.map((s) => [splitQualified(s.name).name, s.sha256])));
      ctx.registry.replaceApp(params, ctx.session.sessionId, digests);
      const declared = new Set(params.skills.map((s) => s.name));
      await deleteSkills(ctx.env.ARTIFACTS, owner, app, before.map((s) => splitQualified(s.name).name).filter((name) => !declared.has(name)));
      saveSession(ctx.ws, { ...ctx.session, initializedAt: Date.now(), currentMany: params.capabilities.currentMany === true });
      // Once this socket is the app's current one: a pull still answered by an older socket keeps nothing.
      ctx.initialized(app);
      return { result: { protocolVersion: PROTOCOL_VERSION, sessionId: ctx.session.sessionId } };
    }),

  "agents/create": (ctx, raw) =>
    initialized(ctx, () =>
      withParams(AgentDefinition, raw, (params) => {
        const upserted = ctx.registry.upsertAgent(ctx.session.app, params);
        return upserted.ok ? { result: { agentId: upserted.value.id } } : { error: problemToRpc(upserted.problem) };
      }),
    ),

  "resources/push": (ctx, raw) =>
    initialized(ctx, () =>
      withParams(ResourcePushParams, raw, async (params) => {
        const target = conversationFor(ctx, params.conversationId);
        if ("error" in target) return target;
        const fullId = qualify(ctx.session.app, params.id ?? crypto.randomUUID());
        const pushed = await target.stub.pushResource(target.owner, ctx.session.app, {
          fullId,
          title: params.title,
          content: params.content,
          summary: params.summary,
          type: params.type,
        });
        if (!pushed.ok) return { error: problemToRpc(pushed.problem) };
        return { result: { fullId, conversationId: target.conversationId } };
      }),
    ),

  "resources/remove": (ctx, raw) =>
    initialized(ctx, () =>
      withParams(ResourceRemoveParams, raw, async (params) => {
        if (!params.fullId.startsWith(`${ctx.session.app}:`)) {
          return failure(ErrorCode.Forbidden, `an app may remove only its own resources ('${ctx.session.app}:…')`);
        }
        const target = conversationFor(ctx, params.conversationId);
        if ("error" in target) return target;
        const removed = await target.stub.removeResource(target.owner, params.fullId, { notifyApp: false });
        return removed.ok ? { result: {} } : { error: problemToRpc(removed.problem) };
      }),
    ),

  // What the hub kept of the provider goes (a provider that notifies is asked again at the next turn); the
  // conversations watching it (MCP subscriptions) are told now.
  "contexts/changed": (ctx, raw) =>
    initialized(ctx, () =>
      withParams(ContextsChangedParams, raw, (params) => {
        ctx.contextChanged(qualify(ctx.session.app, params.provider));
        return { result: {} };
      }),
    ),
};

export function handleAppRequest(ctx: AppRequestContext, method: string, params: unknown): Promise<RpcOutcome> | RpcOutcome {
  const handler = HANDLERS[method];
  return handler ? handler(ctx, params) : failure(ErrorCode.MethodNotFound, `unknown method '${method}'`);
}

function failure(code: ErrorCode, message: string, data?: unknown): RpcOutcome {
  return { error: data === undefined ? { code, message } : { code, message, data } };
}

function withParams<S extends z.ZodType, R extends RpcOutcome | Promise<RpcOutcome>>(
  schema: S,
  raw: unknown,
  run: (params: z.output<S>) => R,
): R | RpcOutcome {
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) return failure(ErrorCode.InvalidParams, "invalid params", { issues: issuesOf(parsed.error) });
  return run(parsed.data);
}

/** Each declared tool whose input schema is not usable JSON Schema, as an issue naming the tool (as the protocol's own issues read). */
function schemaIssues(tools: readonly { name: string; inputSchema: Record<string, unknown> }[]): { path: string; message: string }[] {
  return tools.flatMap((tool, i) => {
    const checked = checkSchema(tool.inputSchema);
    return checked.ok ? [] : [{ path: `tools.${i}.inputSchema`, message: `tool '${tool.name}': ${checked.problem.detail}` }];
  });
}

function initialized(ctx: AppRequestContext, run: () => Promise<RpcOutcome> | RpcOutcome): Promise<RpcOutcome> | RpcOutcome {
  return ctx.session.initializedAt !== null ? run() : failure(ErrorCode.NotInitialized, "send 'initialize' first");
}

function conversationFor(ctx: AppRequestContext, requested: string | undefined) {
  const owner = ctx.registry.identity();
  const conversationId = requested ?? ctx.registry.activeConversation();
  if (!owner || !conversationId) {
    return failure(ErrorCode.NotFound, "no conversation is active for this user yet; pass conversationId") as { error: RpcFailure };
  }
  return { owner, conversationId, stub: conversationInbox(ctx.env, owner, conversationId) };
}
