/** Clients of Context Runtime: `ContextApp` for apps that provide context, `ContextClient` for agent frontends. */
export { ContextApp } from "./context-app";
export type { ContextAppEvents, ContextAppOptions } from "./context-app";
export type { AppTool, ContextProvider, CurrentArgs, ListArgs, ProviderPage, ToolCallInfo } from "./provider-requests";
export { defineHook } from "./hook-requests";
export type { AppHook, AppHookAt, HookCallInfo, HookDecisionOf, HookPayloadOf } from "./hook-requests";
export { ContextAppError } from "./rpc-link";
export { ContextClient, ContextRuntimeError } from "./context-client";
export type { ContextClientOptions } from "./context-client";
export type { SocketLike, WebSocketCtor } from "./websocket";
export { ErrorCode } from "../protocol/jsonrpc";
export type { ContextData, ContextList, ContextListItem } from "../protocol/context-data";
export type {
  AgentDefinition,
  ResourcePushParams,
  ResourcePushResult,
  ResourcesRemovedParams,
  MountDeclaration,
  SkillDeclaration,
  ToolAnnotations,
  ToolDeclaration,
  ToolsCallParams,
  ToolsCallResult,
} from "../protocol/methods";
export type * from "../protocol/frontend";
export type * from "../protocol/tools";
export type * from "../protocol/evidence";
export type { HookCall, HookCallParams, HookDeclaration, HookFailure, HookPoint, HookSpec } from "../protocol/hooks";
export type * from "../protocol/history";
export type { JsonObject } from "../protocol/json";
export type { CompactionLimits, CompactionPolicy, CompactionPolicyInput, TrimPolicy, TrimPolicyInput } from "../protocol/policies";
