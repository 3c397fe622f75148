import * as z from "zod";

/** A lone UTF-16 surrogate: not text, and SQLite would store it as U+FFFD, so a replay would differ from the first answer. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}

/** Text from outside, `min` to `max` characters, made well-formed as it comes in so it reads back the same. */
export function Text(max: number, min = 0) {
  return z.string().min(min).max(max).transform(wellFormed);
}
