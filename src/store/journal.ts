// The append-only journal beside the --data snapshot: one JSON line per record a commit changed,
// plus the id counters. A record the journal has not had since the last snapshot goes whole; a
// payment or refund it has had goes as the fields that changed since (a capture is its state, its
// amounts, its time and one history line, not the whole payment), so a commit costs what it
// changed, not the size of its records or of the state. Replaying a line twice is harmless. The
// snapshot (lowdb's file) is rewritten only when the journal has grown as large as it, behind the
// commits (see store.ts), and at start, on reset and on close, so that cost is spread over as many
// commits. Each commit ends with
// the counters line, so replay applies whole commits only: one a crash cut short (a torn line, or
// lines without their counters line) was never acknowledged, and none of it is applied.
import { existsSync, readFileSync } from "node:fs";
import { open, rename, rm, type FileHandle } from "node:fs/promises";
import { writeWhole } from "./snapshot-file.js";
import type { Counters } from "../ids.js";
import type { State } from "./types.js";

export type Collection = "merchants" | "transactions" | "refunds" | "tokens" | "payouts" | "subscriptions" | "notifications";

/** The key that names a record of each collection. */
export const KEY_FIELD = {
  merchants: "merchant_id",
  transactions: "transaction_id",
  refunds: "refund_reference_id",
  tokens: "token_id",
  payouts: "transaction_id",
  subscriptions: "recurring_id",
  notifications: "notification_id",
} as const satisfies Record<Collection, string>;

/**
 * The collections journaled by changed fields, each with the one list its records grow (null when
 * none). Their records' other nested values are replaced when they change, never changed in place;
 * the list only grows at its end and may drop its oldest entries. Other collections' records are
 * small or rarely changed, and go whole.
 */
const BY_FIELD = new Map<Collection, string | null>([
  ["transactions", "history"],
  ["refunds", null],
]);

/**
 * A record as a commit left it (`v`), or what a commit changed in one journaled before (`k`, its
 * key): fields set (`s`), fields removed (`d`), and the entries its list gained from position
 * h[0] on (`h`).
 */
type RecordLine = { c: Collection; v: Record<string, unknown> } | { c: Collection; k: string; s?: Record<string, unknown>; d?: string[]; h?: [number, ...unknown[]] };
export type JournalLine = RecordLine | { counters: Counters };

type Fields = Record<string, unknown>;

/** A record's top-level values as last journaled, and its list then. */
interface Written {
  fields: Fields;
  list: unknown[] | undefined;
  listLength: number;
  listFirst: unknown;
}

export interface LineEncoder {
  /** the journal line for a record a commit changed; undefined when nothing in it differs from its last line */
  line(c: Collection, record: object): string | undefined;
  /** the record as it is now is on disk (a snapshot has it): its next line is what changed since */
  written(c: Collection, record: object): void;
  /** its next line is whole: a snapshot has it with changes no line has yet, which may be undone before the next commit */
  wholeNext(record: object): void;
  /** every record's next line is whole: after an append or a snapshot that failed */
  forget(): void;
}

/**
 * How many records' last lines are remembered before the oldest half are forgotten: their next line
 * is then whole. Bounds the copies (~400 bytes each) whatever the state holds, while a payment
 * changed within the next ~25,000-50,000 records written (a capture after its authorisation, a
 * refund after its capture) still goes as its changed fields.
 */
export const REMEMBERED_RECORDS = 25_000;

export function lineEncoder(remembered = REMEMBERED_RECORDS): LineEncoder {
  // two generations: a record is looked up in both; when the young one is full it becomes the old
  // one. Maps, not WeakMaps: the generations bound what they hold anyway (a record dropped from the
  // state stays at most until its generation goes; a reset forgets them all), and a WeakMap is an
  // ephemeron table the young collections must process: with 100,000 payments stored and --data,
  // W1's young collections took ~2x as long with them and full collections came ~3x as often
  let young = new Map<object, Written>();
  let old = new Map<object, Written>();
  const remember = (record: object, listField: string | null): void => {
    const held = record as Fields;
    const list = listField ? (held[listField] as unknown[] | undefined) : undefined;
    keep(record, { fields: { ...held }, list, listLength: list?.length ?? 0, listFirst: list?.[0] });
  };
  const keep = (record: object, w: Written): void => {
    if (young.has(record)) return void young.set(record, w);
    if (young.size >= remembered) {
      old = young;
      young = new Map();
    }
    young.set(record, w);
  };
  return {
    line(c, record) {
      const held = record as Fields;
      const listField = BY_FIELD.get(c);
      const before = young.get(record) ?? old.get(record);
      if (listField === undefined || !before) {
        if (listField !== undefined) remember(record, listField);
        return JSON.stringify({ c, v: record });
      }
      keep(record, before);
      const line: Extract<RecordLine, { k: string }> = { c, k: String(held[KEY_FIELD[c]]) };
      const was = before.fields;
      for (const field in held) {
        const value = held[field];
        if (field === listField || value === was[field]) continue;
        if (value === undefined) (line.d ??= []).push(field);
        else (line.s ??= {})[field] = value;
        was[field] = value;
      }
      for (const field in was) {
        if (field === listField || field in held) continue;
        (line.d ??= []).push(field);
        delete was[field];
      }
      if (listField) {
        // the entries added since its last line, or the whole list when it is not the one that grew
        const list = held[listField] as unknown[] | undefined;
        const from = before.list ? before.listLength : 0;
        if (list === undefined) {
          if (before.list !== undefined) (line.d ??= []).push(listField);
        } else if (before.list === undefined || (list === before.list && list.length >= from && list[0] === before.listFirst)) {
          if (list.length > from) line.h = [from, ...list.slice(from)];
        } else (line.s ??= {})[listField] = list;
        Object.assign(before, { list, listLength: list?.length ?? 0, listFirst: list?.[0] });
      }
      return line.s || line.d || line.h ? JSON.stringify(line) : undefined;
    },
    written(c, record) {
      const listField = BY_FIELD.get(c);
      if (listField !== undefined) remember(record, listField);
    },
    wholeNext(record) {
      young.delete(record);
      old.delete(record);
    },
    forget() {
      young = new Map();
      old = new Map();
    },
  };
}

export interface Journal {
  /** bytes appended since the last snapshot began */
  readonly size: number;
  /** appends the lines and waits until they are on disk */
  append(lines: readonly string[]): Promise<void>;
  /** empties it, and drops the journal kept by rotate() (a snapshot now holds everything) */
  clear(): Promise<void>;
  /**
   * Goes on in a new, empty file; the lines so far stay in `<path>.old` until dropOld(), for a
   * snapshot being written while commits go on: until it is whole on disk, those lines are
   * what holds their changes.
   */
  rotate(): Promise<void>;
  /** the snapshot has what `<path>.old` held */
  dropOld(): Promise<void>;
  close(): Promise<void>;
}

/** The journal a snapshot in the making still needs; replayed before the journal itself. */
export const oldJournalPath = (path: string) => `${path}.old`;

export async function openJournal(path: string): Promise<Journal> {
  let handle: FileHandle = await open(path, "a");
  let size = (await handle.stat()).size;
  const dropOld = () => rm(oldJournalPath(path), { force: true });
  return {
    get size() {
      return size;
    },
    async append(lines) {
      if (!lines.length) return;
      try {
        const written = await writeWhole(handle, `${lines.join("\n")}\n`);
        await handle.datasync();
        size += written;
      } catch (err) {
        // what this append wrote is taken back: a later append must never follow a torn line
        await handle.truncate(size).catch(() => undefined);
        throw err;
      }
    },
    async clear() {
      await handle.truncate(0);
      await handle.datasync();
      size = 0;
      await dropOld();
    },
    async rotate() {
      await handle.close();
      await rename(path, oldJournalPath(path));
      handle = await open(path, "a");
      size = 0;
    },
    dropOld,
    close: () => handle.close(),
  };
}

/**
 * Applies the journal at `path` to a state read from the snapshot, a commit at a time (its
 * records, then its counters line): a whole record replaces the one with its key, or is added; a
 * change is applied to the record with its key. What follows the last counters line, a torn line
 * included, is a commit a crash cut short and is ignored; a line that is not JSON before the end,
 * or a change to a record the state does not have, means the file is not what Sandgate wrote, and
 * throws.
 */
export function replayJournal(path: string, state: State): number {
  if (!existsSync(path)) return 0;
  const lines = readFileSync(path, "utf8").split("\n");
  if (lines.at(-1) === "") lines.pop();
  const positions = new Map<Collection, Map<string, number>>();
  const positionsOf = (c: Collection) => {
    let map = positions.get(c);
    if (!map) {
      const list = state[c] as unknown as Fields[];
      map = new Map(list.map((r, i) => [String(r[KEY_FIELD[c]]), i]));
      positions.set(c, map);
    }
    return map;
  };
  const apply = (line: RecordLine, number: number) => {
    const list = state[line.c] as unknown as Fields[];
    if ("v" in line) {
      const key = String(line.v[KEY_FIELD[line.c]]);
      const at = positionsOf(line.c).get(key);
      if (at === undefined) {
        positionsOf(line.c).set(key, list.length);
        list.push(line.v);
      } else list[at] = line.v;
      return;
    }
    const at = positionsOf(line.c).get(line.k);
    const listField = BY_FIELD.get(line.c);
    if (at === undefined || listField === undefined) throw new Error(`line ${number} changes ${line.c} ${line.k}, which the state does not hold whole`);
    const held = list[at]!;
    Object.assign(held, line.s);
    for (const field of line.d ?? []) delete held[field];
    if (line.h && listField) {
      const [from, ...added] = line.h;
      held[listField] = [...((held[listField] as unknown[] | undefined) ?? []).slice(0, from), ...added];
    }
  };
  let applied = 0;
  let commit: { line: RecordLine; number: number }[] = [];
  lines.forEach((text, i) => {
    let line: JournalLine;
    try {
      line = JSON.parse(text) as JournalLine;
    } catch (err) {
      if (i === lines.length - 1) return; // torn by a crash: never acknowledged
      throw new Error(`line ${i + 1} is not JSON (${(err as Error).message})`);
    }
    if (!("counters" in line)) {
      if (!(line.c in KEY_FIELD) || !("v" in line || "k" in line)) throw new Error(`line ${i + 1} is not a record of a known collection`);
      commit.push({ line, number: i + 1 });
      return;
    }
    // the commit is whole: its records, then the counters, which only grow (never below the snapshot's)
    for (const { line: record, number } of commit) apply(record, number);
    for (const [kind, n] of Object.entries(line.counters)) state.counters[kind] = Math.max(state.counters[kind] ?? 0, n);
    applied += commit.length + 1;
    commit = [];
  });
  return applied;
}
