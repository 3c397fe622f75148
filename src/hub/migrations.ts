import init from "../../migrations/hub/0001_init.sql";
import agentPolicies from "../../migrations/hub/0002_agent_policies.sql";
import toolsSkills from "../../migrations/hub/0003_tools_skills.sql";
import conversations from "../../migrations/hub/0004_conversations.sql";
import subagents from "../../migrations/hub/0005_subagents.sql";
import agentModel from "../../migrations/hub/0006_agent_model.sql";
import agentCorrectives from "../../migrations/hub/0007_agent_correctives.sql";
import agentGuard from "../../migrations/hub/0008_agent_guard.sql";
import agentDontMention from "../../migrations/hub/0009_agent_dont_mention.sql";
import agentSeesImages from "../../migrations/hub/0010_agent_sees_images.sql";
import hooks from "../../migrations/hub/0011_hooks.sql";
import mounts from "../../migrations/hub/0012_mounts.sql";
import agentSearchHistory from "../../migrations/hub/0013_agent_search_history.sql";
import toolVectors from "../../migrations/hub/0014_tool_vectors.sql";
import gatewayHeads from "../../migrations/hub/0015_gateway_heads.sql";
import contextWatchers from "../../migrations/hub/0016_context_watchers.sql";
import mcpServers from "../../migrations/hub/0017_mcp_servers.sql";
import metrics from "../../migrations/hub/0018_metrics.sql";
import providerNotifies from "../../migrations/hub/0019_provider_notifies.sql";
import type { Migration } from "../storage/migrate";

export const HUB_MIGRATIONS: Migration[] = [
  { version: 1, name: "0001_init", sql: init },
  { version: 2, name: "0002_agent_policies", sql: agentPolicies },
  { version: 3, name: "0003_tools_skills", sql: toolsSkills },
  { version: 4, name: "0004_conversations", sql: conversations },
  { version: 5, name: "0005_subagents", sql: subagents },
  { version: 6, name: "0006_agent_model", sql: agentModel },
  { version: 7, name: "0007_agent_correctives", sql: agentCorrectives },
  { version: 8, name: "0008_agent_guard", sql: agentGuard },
  { version: 9, name: "0009_agent_dont_mention", sql: agentDontMention },
  { version: 10, name: "0010_agent_sees_images", sql: agentSeesImages },
  { version: 11, name: "0011_hooks", sql: hooks },
  { version: 12, name: "0012_mounts", sql: mounts },
  { version: 13, name: "0013_agent_search_history", sql: agentSearchHistory },
  { version: 14, name: "0014_tool_vectors", sql: toolVectors },
  { version: 15, name: "0015_gateway_heads", sql: gatewayHeads },
  { version: 16, name: "0016_context_watchers", sql: contextWatchers },
  { version: 17, name: "0017_mcp_servers", sql: mcpServers },
  { version: 18, name: "0018_metrics", sql: metrics },
  { version: 19, name: "0019_provider_notifies", sql: providerNotifies },
];
