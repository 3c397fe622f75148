import init from "../../migrations/conversation/0001_init.sql";
import type { Migration } from "../storage/migrate";

export const CONVERSATION_MIGRATIONS: Migration[] = [{ version: 1, name: "0001_init", sql: init }];
