/**
 * The context ledger: the version of each context and resource the model last
 * saw in this conversation, and the per-turn diff that decides what to inject.
 */

import type { LedgerKind, MissingReason } from "../protocol/evidence";

export interface LedgerEntry {
  key: string;
  kind: LedgerKind;
  title: string;
  version: string;
}

/** What the runtime learned about one attached context or resource this turn. */
export type Observation =
  | { key: string; kind: LedgerKind; status: "present"; title: string; version: string; content: string }
  | { key: string; kind: LedgerKind; status: "empty" }
  | { key: string; kind: LedgerKind; status: "missing"; reason: MissingReason; detail: string };

export type MissingObservation = Extract<Observation, { status: "missing" }>;

export type LedgerChange =
  | { key: string; kind: LedgerKind; change: "first" | "updated"; title: string; version: string; content: string }
  | { key: string; kind: LedgerKind; change: "removed"; reason: "detached" | "empty" };

export interface LedgerDiff {
  changes: LedgerChange[];
  unchanged: string[];
  /** Attached, answered "nothing current", and not in the ledger: nothing to say. */
  empty: string[];
  missing: MissingObservation[];
}

/** Contexts and resources are separate namespaces: `notes:sel` may name both a provider and a pushed resource. */
export function ledgerId(entry: { kind: LedgerKind; key: string }): string {
  return `${entry.kind}\u0000${entry.key}`;
}

/**
 * first time → inject; changed version → inject as updated; same version → skip;
 * in the ledger but no longer observed (detached) or answered null → removed.
 * A context that could not be read this turn is neither injected nor removed:
 * the model keeps what it last saw, and the turn reports it missing.
 */
export function diffLedger(previous: readonly LedgerEntry[], observed: readonly Observation[]): LedgerDiff {
  const changes: LedgerChange[] = [];
  const unchanged: string[] = [];
  const empty: string[] = [];
  const missing: MissingObservation[] = [];
  const last = new Map(previous.map((e) => [ledgerId(e), e]));
  const seen = new Set<string>();

  for (const obs of observed) {
    const id = ledgerId(obs);
    if (seen.has(id)) continue;
    seen.add(id);
    const before = last.get(id);
    switch (obs.status) {
      case "missing":
        missing.push(obs);
        break;
      case "empty":
        if (before) changes.push({ key: obs.key, kind: obs.kind, change: "removed", reason: "empty" });
        else empty.push(obs.key);
        break;
      case "present":
        if (!before) changes.push({ ...pick(obs), change: "first" });
        else if (before.version !== obs.version) changes.push({ ...pick(obs), change: "updated" });
        else unchanged.push(obs.key);
        break;
    }
  }
  for (const entry of previous) {
    if (!seen.has(ledgerId(entry))) changes.push({ key: entry.key, kind: entry.kind, change: "removed", reason: "detached" });
  }
  return { changes, unchanged, empty, missing };
}

function pick(obs: Extract<Observation, { status: "present" }>) {
  return { key: obs.key, kind: obs.kind, title: obs.title, version: obs.version, content: obs.content };
}
