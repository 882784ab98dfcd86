// The formats a state has been kept in, and how an earlier one is brought up to today's (docs/state.md,
// "Formats and versions"). Every earlier format that landed on main is kept as a golden copy written
// by its own code (test/earlier-formats/), and today's code is started on each in the tests.
//   --data: the snapshot's `version` and the journal's first line ({"journal":N}). 1 is every format
//   before versions were written: a snapshot written whole or behind a journal of whole records or of
//   changed fields, with or without payouts and notifications, cards on file with full numbers or not.
//   All of them read the same way; what differs is brought up to date here, once, on start (the
//   snapshot written at start then holds version 2, and the journal starts again).
import { forgetFullNumber } from "../domain/card-on-file.js";
import { STATE_VERSION, type State } from "../domain/types.js";

/** A state written by a Sandgate newer than this one: it is not read, so that nothing in it is lost. */
export class NewerFormat extends Error {
  override name = "NewerFormat";
}

/** The line a journal starts with: what follows is in this format. */
export const journalHeader = (): string => JSON.stringify({ journal: STATE_VERSION });

/**
 * A state read from a --data snapshot, brought up to today's format in place (before its journal is
 * replayed: the lines of an earlier journal are today's lines too). Throws NewerFormat for a format
 * this code does not know, and Error for what is no Sandgate state.
 */
export function upgradeSnapshot(state: State): void {
  if (!Number.isInteger(state?.version) || !Array.isArray(state.transactions)) throw new Error("not a Sandgate state file");
  if (state.version > STATE_VERSION) {
    throw new NewerFormat(`written by a newer Sandgate (state format ${state.version}; this one reads formats 1 to ${STATE_VERSION})`);
  }
  // before payouts and the notification outbox were kept
  state.notifications ??= [];
  state.payouts ??= [];
  state.version = STATE_VERSION;
}

/** The version a journal's first line names (1 without one); NewerFormat past today's. */
export function journalVersion(firstLine: string | undefined): number {
  const version = firstLine?.startsWith('{"journal":') ? (JSON.parse(firstLine) as { journal: unknown }).journal : 1;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) throw new Error("its first line names no journal format");
  if (version > STATE_VERSION) throw new NewerFormat(`written by a newer Sandgate (journal format ${version}; this one reads formats 1 to ${STATE_VERSION})`);
  return version;
}

/**
 * What the journal brought that an earlier Sandgate wrote differently, brought up to date once it is
 * replayed: cards on file kept with their full numbers keep only what today's keep (the number goes,
 * fingerprinted when a scenario names it). Returns how many records changed.
 */
export function upgradeRecords(state: State, namesCard: (number: string) => boolean): number {
  let changed = 0;
  for (const token of state.tokens) if (forgetFullNumber(token, namesCard)) changed++;
  return changed;
}
