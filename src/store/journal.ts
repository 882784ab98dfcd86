// The append-only journal beside the --data snapshot: one JSON line per record a commit changed,
// plus the id counters. A payment or refund a request looked up and then changed goes as the fields
// that changed since the lookup (a capture is its state, its amounts, its time and one history
// line, not the whole payment); any other record goes whole. So a commit costs what it changed,
// not the size of its records or of the state, and nothing is kept for it between requests.
// Replaying a line twice is harmless. The snapshot (lowdb's file) is rewritten only when the
// journal has grown as large as it, behind the commits (see memory-store.ts), and at start, on reset and
// on close, so that cost is spread over as many commits. Each commit ends with the counters line,
// so replay applies whole commits only: one a crash cut short (a torn line, or lines without their
// counters line) was never acknowledged, and none of it is applied.
import { existsSync, readFileSync } from "node:fs";
import { open, rename, rm, type FileHandle } from "node:fs/promises";
import { writeWhole } from "./snapshot-file.js";
import { journalHeader, journalVersion } from "./state-formats.js";
import type { Counters } from "../domain/ids.js";
import { KEY_FIELD, type Collection, type State } from "../domain/types.js";

/**
 * The collections journaled by changed fields, each with the one list its records grow (null when
 * none). Their records' other nested values are replaced when they change, never changed in place;
 * the list only grows at its end and may drop its oldest entries. Other collections' records are
 * small or rarely changed, and go whole.
 */
const BY_FIELD = new Map<Collection, string | null>([
  ["transactions", "history"],
  ["refunds", null],
  // a merchant of 100 accounts is ~35 KB: an account added, a clock advanced or a key rotated is one line of what changed
  ["merchants", "accounts"],
]);

/**
 * A record as a commit left it (`v`), or what a commit changed in one journaled before (`k`, its
 * key): fields set (`s`), fields removed (`d`), and the entries its list gained from position
 * h[0] on (`h`).
 */
type RecordLine =
  { c: Collection; v: Record<string, unknown> } | { c: Collection; k: string; s?: Record<string, unknown>; d?: string[]; h?: [number, ...unknown[]] };
type JournalLine = RecordLine | { counters: Counters };

type Fields = Record<string, unknown>;

/** A record's top-level values as it is on disk (in the journal or a snapshot), and its list then. */
interface Image {
  fields: Fields;
  list: unknown[] | undefined;
  listLength: number;
  listFirst: unknown;
}

export interface LineEncoder {
  /**
   * A payment or refund a request looked up, or a merchant about to change, with no change that is
   * not on disk (or on its way there: a write that fails calls forget()): its values as they are
   * now, so that the line of a change that follows is what changed. Kept until its next line, or until the next commit when it
   * did not change.
   */
  image(c: Collection, record: object): void;
  /** the journal line for a record a commit changed: what changed since its image, or the record whole without one; undefined when nothing differs */
  line(c: Collection, record: object): string | undefined;
  /** the lines of a commit are made: images of records it did not change go (a later lookup takes another) */
  committed(): void;
  /** its next line is whole: a snapshot has it with changes no line has yet, which may be undone before the next commit */
  wholeNext(record: object): void;
  /** every record's next line is whole: after an append or a snapshot that failed, or a snapshot */
  forget(): void;
}

/**
 * Images held at once, at most: beyond this (lookups without a commit) they are all dropped, and
 * the next line of each of those records is whole. Correct either way, only bigger.
 */
const MAX_IMAGES = 10_000;

/**
 * Journal lines made from images taken when a request looks a record up. An image lives from the
 * lookup to the commit that writes the change (well under a millisecond), so it never outlives a
 * young collection: no copy of the state is kept for the journal's sake. A record changed without a
 * lookup (or whose image went) is journaled whole, which is always correct.
 */
export function lineEncoder(maxImages = MAX_IMAGES): LineEncoder {
  let images = new Map<object, Image>();
  return {
    image(c, record) {
      const listField = BY_FIELD.get(c);
      if (listField === undefined || images.has(record)) return;
      if (images.size >= maxImages) images = new Map();
      const held = record as Fields;
      const list = listField ? (held[listField] as unknown[] | undefined) : undefined;
      images.set(record, { fields: { ...held }, list, listLength: list?.length ?? 0, listFirst: list?.[0] });
    },
    line(c, record) {
      const held = record as Fields;
      const listField = BY_FIELD.get(c);
      const before = images.get(record);
      if (listField === undefined || !before) return JSON.stringify({ c, v: record });
      images.delete(record);
      const line: Extract<RecordLine, { k: string }> = { c, k: String(held[KEY_FIELD[c]]) };
      const was = before.fields;
      for (const field in held) {
        const value = held[field];
        if (field === listField || value === was[field]) continue;
        if (value === undefined) (line.d ??= []).push(field);
        else (line.s ??= {})[field] = value;
      }
      for (const field in was) if (field !== listField && !(field in held)) (line.d ??= []).push(field);
      if (listField) {
        // the entries added since the image, or the whole list when it is not the one that grew
        const list = held[listField] as unknown[] | undefined;
        const from = before.list ? before.listLength : 0;
        if (list === undefined) {
          if (before.list !== undefined) (line.d ??= []).push(listField);
        } else if (before.list === undefined || (list === before.list && list.length >= from && list[0] === before.listFirst)) {
          if (list.length > from) line.h = [from, ...list.slice(from)];
        } else (line.s ??= {})[listField] = list;
      }
      return line.s || line.d || line.h ? JSON.stringify(line) : undefined;
    },
    committed() {
      if (images.size) images = new Map();
    },
    wholeNext(record) {
      images.delete(record);
    },
    forget() {
      images = new Map();
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
  // the bytes of an append, in one buffer reused by every append (they never overlap: the store
  // makes one at a time). A new Buffer per append is memory outside the heap that V8 counts: with
  // 100,000 payments stored, it brought on full collections of the whole heap every few seconds
  let scratch = Buffer.allocUnsafe(64 * 1024);
  const encode = (text: string) => {
    const length = Buffer.byteLength(text);
    if (length > scratch.length) scratch = Buffer.allocUnsafe(Math.max(length, scratch.length * 2));
    return scratch.subarray(0, scratch.write(text));
  };
  return {
    get size() {
      return size;
    },
    async append(lines) {
      if (!lines.length) return;
      try {
        // a journal's first line says which format its lines are in
        const text = `${size === 0 ? `${journalHeader()}\n` : ""}${lines.join("\n")}\n`;
        const written = await writeWhole(handle, encode(text));
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
  // its first line names its format (a journal an earlier Sandgate wrote has none: its lines are today's)
  if (journalVersion(lines[0]) > 1) lines[0] = "";
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
    if (i === 0 && text === "") return;
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
