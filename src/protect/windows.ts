/**
 * The parts of a text an expensive view needs to see: a window around each
 * place a cheap pre-filter found, wide enough for a long token and the name
 * written before it, reaching to the ends of its lines when they are near.
 * Overlapping windows merge, so no place is viewed twice.
 */
export type Range = readonly [start: number, end: number];

/** Windows around `places`, which must come in increasing order. */
export function windowsAround(text: string, places: Iterable<Range>, radius: number): [number, number][] {
  const windows: [number, number][] = [];
  for (const [at, end] of places) {
    const last = windows[windows.length - 1];
    if (last !== undefined && end + radius / 2 <= last[1]) continue;
    const from = lineStartNear(text, Math.max(0, at - radius), radius);
    const to = lineEndNear(text, Math.min(text.length, end + radius), radius);
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else windows.push([from, to]);
  }
  return windows;
}

function lineStartNear(text: string, at: number, reach: number): number {
  if (at === 0) return 0;
  const newline = text.lastIndexOf("\n", at - 1);
  if (newline < 0) return at <= reach ? 0 : at;
  return at - newline <= reach ? newline + 1 : at;
}

function lineEndNear(text: string, at: number, reach: number): number {
  const newline = text.indexOf("\n", at);
  if (newline < 0) return text.length - at <= reach ? text.length : at;
  return newline - at <= reach ? newline : at;
}
