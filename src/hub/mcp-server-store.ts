/**
 * The MCP servers of the hub's user (migration 0017): registered through the HTTP API (`declared_by` 'user') or
 * declared by an app in `initialize`. The hub is the user's own, so no other tenant or user ever reads these rows.
 * Headers stay here and go only to the server: every listing names them, never their values.
 */
import type { Skipped } from "../mcp/consume/mapping";
import type { McpServerDeclaration } from "../protocol/mcp-servers";
import type { ServerTarget } from "../mcp/consume/session";

export const USER_DECLARED = "user";

export interface StoredServer extends ServerTarget {
  declaredBy: string;
  createdAt: string;
  skipped: Skipped[];
  hasResources: boolean;
}

interface ServerRow extends Record<string, SqlStorageValue> {
  name: string;
  url: string;
  headers: string;
  declared_by: string;
  created_at: string;
  skipped: string;
  has_resources: number;
}

export class McpServerStore {
  constructor(private readonly sql: SqlStorage) {}

  all(): StoredServer[] {
    return this.sql.exec<ServerRow>("SELECT * FROM mcp_servers ORDER BY name").toArray().map(serverOf);
  }

  get(name: string): StoredServer | null {
    const row = this.sql.exec<ServerRow>("SELECT * FROM mcp_servers WHERE name = ?", name).toArray()[0];
    return row ? serverOf(row) : null;
  }

  countDeclaredBy(declaredBy: string): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM mcp_servers WHERE declared_by = ?", declaredBy).one().n;
  }

  declaredBy(declaredBy: string): StoredServer[] {
    return this.sql.exec<ServerRow>("SELECT * FROM mcp_servers WHERE declared_by = ? ORDER BY name", declaredBy).toArray().map(serverOf);
  }

  add(server: ServerDeclaration, declaredBy: string): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO mcp_servers (name, url, headers, declared_by, created_at) VALUES (?, ?, ?, ?, ?)",
      server.name,
      server.url,
      JSON.stringify(server.headers ?? {}),
      declaredBy,
      new Date().toISOString(),
    );
  }

  remove(name: string): void {
    this.sql.exec("DELETE FROM mcp_servers WHERE name = ?", name);
  }

  /** What the last listing left out, and whether the server offers resources: shown with the server, kept across restarts. */
  listed(name: string, skipped: readonly Skipped[], hasResources: boolean): void {
    this.sql.exec("UPDATE mcp_servers SET skipped = ?, has_resources = ? WHERE name = ?", JSON.stringify(skipped), hasResources ? 1 : 0, name);
  }
}

type ServerDeclaration = Pick<McpServerDeclaration, "name" | "url" | "headers">;

function serverOf(row: ServerRow): StoredServer {
  return {
    name: row.name,
    url: row.url,
    headers: JSON.parse(row.headers) as Record<string, string>,
    declaredBy: row.declared_by,
    createdAt: row.created_at,
    skipped: JSON.parse(row.skipped) as Skipped[],
    hasResources: row.has_resources === 1,
  };
}
