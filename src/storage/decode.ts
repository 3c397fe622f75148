/**
 * Reading stored rows without casts. A row of a small table is read through a zod schema of its columns, each JSON
 * column through `jsonText` and the schema of what it holds; the hot paths (a conversation's messages, read by the
 * thousand) check their plain columns with `typeof` through the helpers below, and parse only the JSON they read.
 * A row that does not decode is a bug or a damaged database: it throws, naming the column.
 */
import * as z from "zod";
import type { Row } from "./database";

/** A TEXT column that holds JSON: parsed, then decoded by `schema`. */
export function jsonText<S extends z.ZodType>(schema: S) {
  return z
    .string()
    .transform((text, ctx) => {
      try {
        const value: unknown = JSON.parse(text);
        return value;
      } catch {
        ctx.addIssue({ code: "custom", message: "not JSON" });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

/** One row through the schema of its columns. */
export function decodeRow<S extends z.ZodType>(schema: S, row: Row, table: string): z.output<S> {
  const decoded = schema.safeParse(row);
  if (!decoded.success) throw new Error(`a stored ${table} row does not decode: ${z.prettifyError(decoded.error)}`);
  return decoded.data;
}

/** A JSON column read on its own (a hot path that reads one column of many rows): parsed, then decoded by `schema`. */
export function json<S extends z.ZodType>(schema: S, row: Row, column: string): z.output<S> {
  return jsonCell(schema, row[column], column);
}

function wrong(column: string, expected: string, value: unknown): never {
  throw new Error(`stored column ${column} is not ${expected}: ${value === null ? "NULL" : typeof value}`);
}

export function text(row: Row, column: string): string {
  return textCell(row[column], column);
}

export function textOrNull(row: Row, column: string): string | null {
  return textOrNullCell(row[column], column);
}

export function numeric(row: Row, column: string): number {
  return numericCell(row[column], column);
}

export function numericOrNull(row: Row, column: string): number | null {
  const value = row[column];
  return value === null || typeof value === "number" ? value : wrong(column, "a number or NULL", value);
}

/* One value of `column`, as `Rows.raw()` reads it by position: the same checks as the row helpers above. */

export function jsonCell<S extends z.ZodType>(schema: S, stored: unknown, column: string): z.output<S> {
  const text = textCell(stored, column);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`stored column ${column} is not JSON`);
  }
  const decoded = schema.safeParse(value);
  if (!decoded.success) throw new Error(`stored column ${column} does not decode: ${z.prettifyError(decoded.error)}`);
  return decoded.data;
}

export function textCell(value: unknown, column: string): string {
  return typeof value === "string" ? value : wrong(column, "text", value);
}

export function textOrNullCell(value: unknown, column: string): string | null {
  return value === null || typeof value === "string" ? value : wrong(column, "text or NULL", value);
}

export function numericCell(value: unknown, column: string): number {
  return typeof value === "number" ? value : wrong(column, "a number", value);
}
