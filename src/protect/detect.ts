/**
 * Secret detection on the text and on views of it: the rules and the table
 * reader run on the original, then on each derived view (folded, joined,
 * pieces put together, base64-decoded, hex-decoded), and recursively on views of views (base64
 * of JSON with `\u` escapes) to a fixed depth. A match in a view counts only
 * where the view reads differently from the original, and is redacted at
 * the original span it maps to.
 */
import { forgetCharCodes } from "./char-codes";
import { markdownTableSpans } from "./markdown-table";
import type { ResolvedRedactionPolicy } from "./rules/rule";
import { findSecretSpans, forgetRuleKeywords, type SecretSpan } from "./scan";
import { forgetTextRuns } from "./text-runs";
import { changedFromOriginal, originalSpan, VIEWS } from "./view";

/** Views of views of views: base64 in a JSON string in base64 is as deep as anyone nests by accident. */
const MAX_DEPTH = 3;

interface FoundSpan extends SecretSpan {
  /** Found in a view, so already checked against the text it was derived from. */
  readonly derived: boolean;
}

export function detectSecretSpans(text: string, policy: ResolvedRedactionPolicy): SecretSpan[] {
  try {
    return detect(text, policy, 0);
  } finally {
    // The shared passes remember their last text; a raw secret must not outlive its redaction there.
    forgetTextRuns();
    forgetCharCodes();
    forgetRuleKeywords();
  }
}

function detect(text: string, policy: ResolvedRedactionPolicy, depth: number): FoundSpan[] {
  const spans: FoundSpan[] = [...findSecretSpans(text, policy), ...markdownTableSpans(text)].map((span) => ({ ...span, derived: false }));
  if (depth >= MAX_DEPTH) return spans;
  // Every view is made before any is scanned: scanning a view replaces the shared pass's remembered text.
  for (const view of VIEWS.flatMap((makeViews) => makeViews(text))) {
    for (const span of detect(view.text, policy, depth + 1)) {
      if (!span.derived && !changedFromOriginal(text, view, span.start, span.end)) continue;
      const { start, end } = originalSpan(view, span.start, span.end);
      spans.push({ rule: span.rule, priority: span.priority, start, end, derived: true });
    }
  }
  return spans;
}
