/**
 * Secrets in markdown tables, where no `=` or `:` ties a name to its value:
 * a row whose cell names a secret and whose next cell holds it
 * (`| password | hunter2-Xk9 |`), and a column whose header names a secret
 * (`| user | password |` over `|---|---|`). Values are judged as the
 * assignment rule judges them, so `| password | required |` stays.
 */
import type { SecretSpan } from "./scan";
import { classifySecretKey, type SecretKeyClass } from "./rules/keys";
import { PRIORITY } from "./rules/rule";
import { looksLikeAssignedSecret } from "./rules/values";

interface Cell {
  text: string;
  start: number;
  end: number;
}

/** GFM's delimiter row: dashes, with a colon at either end for alignment. */
const SEPARATOR_CELL = /^:?-+:?$/;
const TABLE_LINE = /^[ \t]*\|.*\|[ \t]*\r?$/;

/** The cells of a `| a | b |` line, each trimmed of spaces and of the backticks around code. */
function cells(line: string, offset: number): Cell[] {
  const found: Cell[] = [];
  const bars: number[] = [];
  for (let i = 0; i < line.length; i++) if (line[i] === "|" && line[i - 1] !== "\\") bars.push(i);
  for (let k = 0; k + 1 < bars.length; k++) {
    let start = bars[k]! + 1;
    let end = bars[k + 1]!;
    while (start < end && /\s/.test(line[start]!)) start++;
    while (end > start && /\s/.test(line[end - 1]!)) end--;
    if (end - start >= 2 && line[start] === "`" && line[end - 1] === "`") {
      start++;
      end--;
    }
    found.push({ text: line.slice(start, end), start: offset + start, end: offset + end });
  }
  return found;
}

function secretCell(cell: Cell | undefined, keyClass: SecretKeyClass | null): SecretSpan | null {
  if (cell === undefined || keyClass === null || !looksLikeAssignedSecret(cell.text, keyClass, true)) return null;
  return { rule: "secret-assignment", priority: PRIORITY.assignment, start: cell.start, end: cell.end };
}

export function markdownTableSpans(text: string): SecretSpan[] {
  if (text.indexOf("|") < 0) return [];
  const spans: SecretSpan[] = [];
  let headerClasses: (SecretKeyClass | null)[] = [];
  let previous: Cell[] | null = null;
  for (let offset = 0; offset <= text.length; ) {
    const newline = text.indexOf("\n", offset);
    const end = newline < 0 ? text.length : newline;
    const line = text.slice(offset, end);
    if (!TABLE_LINE.test(line)) {
      headerClasses = [];
      previous = null;
    } else {
      const row = cells(line, offset);
      if (previous !== null && row.length > 0 && row.every((cell) => SEPARATOR_CELL.test(cell.text))) {
        headerClasses = previous.map((cell) => classifySecretKey(cell.text));
      } else {
        row.forEach((cell, index) => {
          const byHeader = secretCell(cell, headerClasses[index] ?? null);
          const byName = index > 0 ? secretCell(cell, classifySecretKey(row[index - 1]!.text)) : null;
          const span = byHeader ?? byName;
          if (span !== null) spans.push(span);
        });
      }
      previous = row;
    }
    if (newline < 0) break;
    offset = newline + 1;
  }
  return spans;
}
