/**
 * A derived view of a text for detection (decoded, joined, folded), with each
 * of its characters mapped to the span of the original it came from, so a
 * secret found in the view is redacted where it sits in the original; and
 * the parts of a text an expensive view needs to see.
 */
import type { Range } from "../text-runs";

export interface DerivedView {
  readonly text: string;
  /** Where in the original the character behind each view character starts. */
  readonly starts: Uint32Array;
  /** Where it ends (exclusive). */
  readonly ends: Uint32Array;
}

/** The original [start, end) behind view [from, to). */
export function originalSpan(view: DerivedView, from: number, to: number): { start: number; end: number } {
  return { start: view.starts[from]!, end: view.ends[to - 1]! };
}

/**
 * Whether view [from, to) reads differently from the original it maps to.
 * Only such a match is news: an unchanged one the scan of the original has
 * already judged, with all its context (a window of a view has less).
 */
export function changedFromOriginal(original: string, view: DerivedView, from: number, to: number): boolean {
  const { start, end } = originalSpan(view, from, to);
  return end - start !== to - from || original.slice(start, end) !== view.text.slice(from, to);
}

/** A view of `original.slice(offset)` made to map into `original`. */
export function shiftView<T extends DerivedView>(view: T, offset: number): T {
  if (offset !== 0) {
    for (let i = 0; i < view.starts.length; i++) {
      view.starts[i]! += offset;
      view.ends[i]! += offset;
    }
  }
  return view;
}

/** Builds a view from ranges of the original copied in order, leaving out what lies between them. */
export class ViewWriter {
  private readonly chars: string[] = [];
  /** The copied ranges, [from, to) after each other; the maps are filled once, at their final size. */
  private readonly ranges: number[] = [];
  private length = 0;

  /** Copies original[from, to), each character standing for itself. */
  copy(original: string, from: number, to: number): void {
    if (to <= from) return;
    this.chars.push(original.slice(from, to));
    this.ranges.push(from, to);
    this.length += to - from;
  }

  view(): DerivedView {
    const starts = new Uint32Array(this.length);
    const ends = new Uint32Array(this.length);
    let at = 0;
    for (let r = 0; r < this.ranges.length; r += 2) {
      for (let i = this.ranges[r]!, to = this.ranges[r + 1]!; i < to; i++, at++) {
        starts[at] = i;
        ends[at] = i + 1;
      }
    }
    return { text: this.chars.join(""), starts, ends };
  }
}

/**
 * The parts of a text an expensive view needs to see: a window around each
 * place a cheap pre-filter found (`places`, in increasing order), wide enough
 * for a long token and the name written before it, reaching to the ends of its
 * lines when they are near. Overlapping windows merge, so no place is viewed twice.
 */
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
