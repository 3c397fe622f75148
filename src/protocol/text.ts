import * as z from "zod";

/** A lone UTF-16 surrogate: not text, and SQLite would store it as U+FFFD, so a replay would differ from the first answer. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}

/**
 * Text from outside, `min` to `max` characters, made well-formed as it comes in so it reads back the same. Too long
 * says by how much, so whoever sent it knows what to cut.
 */
export function Text(max: number, min = 0) {
  const tooLong = (issue: { input?: unknown }) => `at most ${max.toLocaleString("en-US")} characters${typeof issue.input === "string" ? `, not ${issue.input.length.toLocaleString("en-US")}` : ""}`;
  return z.string().min(min).max(max, { error: tooLong }).transform(wellFormed);
}
