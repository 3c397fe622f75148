import init from "../../migrations/conversation/0001_init.sql";
import policiesAndViews from "../../migrations/conversation/0002_policies_and_views.sql";
import identity from "../../migrations/conversation/0003_identity.sql";
import compaction from "../../migrations/conversation/0004_compaction.sql";
import images from "../../migrations/conversation/0005_images.sql";
import coverage from "../../migrations/conversation/0006_coverage.sql";
import approvals from "../../migrations/conversation/0007_approvals.sql";
import imageIndex from "../../migrations/conversation/0008_image_index.sql";
import nonce from "../../migrations/conversation/0009_nonce.sql";
import runningBytes from "../../migrations/conversation/0010_running_bytes.sql";
import imageBoundary from "../../migrations/conversation/0011_image_boundary.sql";
import tools from "../../migrations/conversation/0012_tools.sql";
import gateway from "../../migrations/conversation/0013_gateway.sql";
import subagents from "../../migrations/conversation/0014_subagents.sql";
import eventIndex from "../../migrations/conversation/0015_event_index.sql";
import gatewayRun from "../../migrations/conversation/0016_gateway_run.sql";
import historySearch from "../../migrations/conversation/0017_history_search.sql";
import gatewayChain from "../../migrations/conversation/0018_gateway_chain.sql";
import mcpSessions from "../../migrations/conversation/0019_mcp_sessions.sql";
import mcpStreamEvents from "../../migrations/conversation/0020_mcp_stream_events.sql";
import mcpSessionActivity from "../../migrations/conversation/0021_mcp_session_activity.sql";
import type { Migration } from "../storage/migrate";
import { MIGRATION_STEPS } from "./migration-steps";

export const CONVERSATION_MIGRATIONS: Migration[] = [
  { version: 1, name: "0001_init", sql: init },
  { version: 2, name: "0002_policies_and_views", sql: policiesAndViews },
  { version: 3, name: "0003_identity", sql: identity },
  { version: 4, name: "0004_compaction", sql: compaction, then: MIGRATION_STEPS[4] },
  { version: 5, name: "0005_images", sql: images },
  { version: 6, name: "0006_coverage", sql: coverage },
  { version: 7, name: "0007_approvals", sql: approvals },
  { version: 8, name: "0008_image_index", sql: imageIndex },
  { version: 9, name: "0009_nonce", sql: nonce, then: MIGRATION_STEPS[9] },
  { version: 10, name: "0010_running_bytes", sql: runningBytes },
  { version: 11, name: "0011_image_boundary", sql: imageBoundary },
  { version: 12, name: "0012_tools", sql: tools },
  { version: 13, name: "0013_gateway", sql: gateway },
  { version: 14, name: "0014_subagents", sql: subagents },
  { version: 15, name: "0015_event_index", sql: eventIndex },
  { version: 16, name: "0016_gateway_run", sql: gatewayRun },
  { version: 17, name: "0017_history_search", sql: historySearch, then: MIGRATION_STEPS[17] },
  { version: 18, name: "0018_gateway_chain", sql: gatewayChain },
  { version: 19, name: "0019_mcp_sessions", sql: mcpSessions },
  { version: 20, name: "0020_mcp_stream_events", sql: mcpStreamEvents },
  { version: 21, name: "0021_mcp_session_activity", sql: mcpSessionActivity },
];
