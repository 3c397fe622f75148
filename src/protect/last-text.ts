/**
 * One remembered result per pass over a text: several parts of one redaction ask for the same text's codes or
 * runs, and keeping the last one lets them share it. `forget` drops it, since it may hold the secrets just redacted.
 */
export function rememberLast<T>(compute: (text: string) => T): { of(text: string): T; forget(): void } {
  let lastText: string | null = null;
  let last: T | null = null;
  return {
    of(text) {
      if (text !== lastText || last === null) {
        last = compute(text);
        lastText = text;
      }
      return last;
    },
    forget() {
      lastText = null;
      last = null;
    },
  };
}
