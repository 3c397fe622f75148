import type { TurnResult } from "../../protocol/frontend";
import type { TurnSections } from "../turn-sections";

/** How this turn differs from a frontend's plain one. */
export interface TurnOptions {
  /** Appendix sections added to the turn's own (a subagent's first turn: its parent's hints). */
  more?: (nonce: string | null, own: TurnSections) => Promise<TurnSections>;
  /** The gateway checked the reply with the output hooks already: the turn does not check it again. */
  outputReviewed?: boolean;
  /** A gateway answer still in progress when this message came: the interrupted-work note names it. */
  interruptedRun?: { runId: string; turnId: string };
}

/** A turn's result as stored: the model input is rebuilt from the history on a replay. */
export type StoredTurnResult = Omit<TurnResult, "messages" | "replayed">;
