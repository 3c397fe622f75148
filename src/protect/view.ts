/**
 * A derived view of a text for detection (decoded, joined, folded), with each
 * of its characters mapped to the span of the original it came from, so a
 * secret found in the view is redacted where it sits in the original.
 */
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
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  /** Copies original[from, to), each character standing for itself. */
  copy(original: string, from: number, to: number): void {
    this.chars.push(original.slice(from, to));
    for (let i = from; i < to; i++) {
      this.starts.push(i);
      this.ends.push(i + 1);
    }
  }

  view(): DerivedView {
    return { text: this.chars.join(""), starts: Uint32Array.from(this.starts), ends: Uint32Array.from(this.ends) };
  }
}
