// The --data snapshot as lowdb's adapter (lowdb reads and writes it through this). Read whole; written
// a slice of records at a time, with the requests waiting answered between slices, so a snapshot
// of 100,000 payments (~130 MB of JSON) never holds the server for more than a millisecond or so.
// A record unchanged since the last snapshot is copied from that file as bytes, not stringified
// again, so a snapshot costs what changed since the last one plus a file copy. The slices go to a
// temp file that is synced and then renamed over the snapshot: a crash leaves the old snapshot or
// the new one, whole.
import { open, readFile, rename, type FileHandle } from "node:fs/promises";
import type { Adapter } from "lowdb";
import type { State } from "../domain/types.js";

/**
 * Records stringified between two turns for requests: ~80 KB of JSON for payments, ~0.3 ms. Under
 * V8's large-object size (128 KB), so each slice's text is made and dropped in the young
 * generation: 250 records (~330 KB) were each allocated in the old generation, where only a full
 * collection frees them, and a snapshot of 100,000 payments then brought on full collections of
 * the whole heap (2 more in 3 snapshots, measured) and took ~20 % more CPU.
 */
const RECORDS_PER_SLICE = 60;

const turnForRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Writes all of `text` at the file's position, continuing short writes (a disk filling up ends in an error). */
export async function writeWhole(handle: FileHandle, text: string | Buffer): Promise<number> {
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  for (let done = 0; done < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done);
    if (bytesWritten === 0) throw new Error("the file takes no more bytes");
    done += bytesWritten;
  }
  return bytes.length;
}

/** Where each record of a list stood in the last snapshot written: the record, and its bytes' start and end. */
interface Placed {
  records: unknown[];
  start: Float64Array;
  end: Float64Array;
}

/** Bytes copied from the last snapshot in one read and write, at most. */
const COPY_CHUNK = 1 << 20;

/**
 * A record that has not changed since the last snapshot was written is copied from that file as
 * bytes instead of being stringified again: with 100,000 payments stored and a few thousand
 * changed since, a snapshot is mostly a file copy (~0.1 s of CPU against ~0.5 s to stringify
 * ~130 MB of JSON, and none of that text made in the heap). The store tells it of every record a
 * commit took (`changed()`), and a record with changes not yet committed is stringified too.
 */
export class SnapshotFile implements Adapter<State> {
  /** records changed since the last snapshot began (those of a write that failed too) */
  private changedSince = new Set<unknown>();
  /** the lists of the file at `path` as the last write placed them; none until one is written */
  private placed = new Map<string, Placed>();

  /**
   * `uncommitted`: told of each record as it goes into the file, as it is at that moment; answers
   * whether it has changes no commit has taken yet (such a record is stringified, not copied).
   */
  constructor(
    private readonly path: string,
    private readonly uncommitted: (record: unknown) => boolean = () => false,
  ) {}

  /** the record is not as the last snapshot has it (a commit took a change to it, or it is new) */
  changed(record: unknown): void {
    this.changedSince.add(record);
  }

  async read(): Promise<State | null> {
    try {
      return JSON.parse(await readFile(this.path, "utf8")) as State;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  async write(state: State): Promise<void> {
    const temp = `${this.path}.tmp`;
    const out = await open(temp, "w");
    const last = this.placed.size ? await open(this.path, "r").catch(() => undefined) : undefined;
    // what changes from now on is not in the file being written if its record was written before
    const stale = this.changedSince;
    this.changedSince = new Set();
    const placed = new Map<string, Placed>();
    let position = 0;
    let buffer = Buffer.allocUnsafe(COPY_CHUNK);
    let used = 0;
    const flush = async () => {
      if (used) position += await writeWhole(out, buffer.subarray(0, used));
      used = 0;
    };
    const put = async (text: string) => {
      const needed = Buffer.byteLength(text);
      if (used + needed > buffer.length) await flush();
      if (needed > buffer.length) buffer = Buffer.allocUnsafe(needed);
      used += buffer.write(text, used);
    };
    /** the bytes [from, to) of the last snapshot, at the end of the new one */
    const copy = async (from: number, to: number) => {
      await flush();
      for (let at = from; at < to;) {
        const { bytesRead } = await last!.read(buffer, 0, Math.min(buffer.length, to - at), at);
        if (bytesRead === 0) throw new Error(`${this.path} is shorter than the snapshot written last`);
        position += await writeWhole(out, buffer.subarray(0, bytesRead));
        at += bytesRead;
      }
    };
    try {
      const fields = Object.entries(state);
      let opened = false;
      const key = (name: string) => `${opened ? "," : "{"}${JSON.stringify(name)}:`;
      for (const [name, value] of fields) {
        if (!Array.isArray(value)) continue;
        const list: unknown[] = value;
        const before = last && this.placed.get(name);
        const now: Placed = { records: [], start: new Float64Array(list.length), end: new Float64Array(list.length) };
        await put(`${key(name)}[`);
        opened = true;
        // a slice at a time, answering the requests waiting between slices; records may be added meanwhile
        for (let at = 0; at < list.length;) {
          const records = list.slice(at, at + RECORDS_PER_SLICE);
          // each record of the slice checked and stringified (or marked to copy, by its place) with no
          // turn for requests in between: what goes into the file is the record as it was checked
          const parts = records.map((record, k) => {
            const i = at + k;
            const same = !this.uncommitted(record) && before?.records[i] === record && !stale.has(record) && !this.changedSince.has(record);
            return same ? i : JSON.stringify(record);
          });
          // a run of records the last snapshot has as they are now, at the same places in the list, is
          // copied in one go: between two of them that file has what this one would have, a ","
          let run: { from: number; to: number; last: number } | undefined;
          for (const part of parts) {
            const i = now.records.length;
            if (i >= now.start.length) grow(now, list.length);
            if (typeof part === "number" && run && run.last === i - 1) {
              now.start[i] = now.end[i - 1]! + (before!.start[i]! - run.to);
              now.end[i] = now.start[i]! + (before!.end[i]! - before!.start[i]!);
              run.to = before!.end[i]!;
              run.last = i;
            } else {
              if (run) await copy(run.from, run.to);
              run = undefined;
              if (i) await put(",");
              now.start[i] = position + used;
              if (typeof part === "number") run = { from: before!.start[i]!, to: before!.end[i]!, last: i };
              else await put(part);
              now.end[i] = typeof part === "number" ? now.start[i]! + (before!.end[i]! - before!.start[i]!) : position + used;
            }
            now.records.push(records[i - at]);
          }
          if (run) await copy(run.from, run.to);
          at += records.length;
          await flush();
          await turnForRequests();
        }
        await put("]");
        placed.set(name, now);
      }
      for (const [name] of fields) {
        // read now, not when the walk began: records added meanwhile have their ids counted
        const value = (state as unknown as Record<string, unknown>)[name];
        if (Array.isArray(value) || value === undefined) continue;
        await put(`${key(name)}${JSON.stringify(value)}`);
        opened = true;
      }
      await put(opened ? "}" : "{}");
      await flush();
      await out.datasync();
      await rename(temp, this.path);
    } catch (err) {
      // the file at `path` is still the last one: what changed since it began still counts
      for (const record of this.changedSince) stale.add(record);
      this.changedSince = stale;
      throw err;
    } finally {
      await out.close();
      await last?.close();
    }
    this.placed = placed;
  }
}

/** more room for the positions of a list that grew while it was written */
function grow(p: Placed, atLeast: number): void {
  const size = Math.max(atLeast, Math.ceil(p.start.length * 1.5) + 16);
  const start = new Float64Array(size);
  const end = new Float64Array(size);
  start.set(p.start);
  end.set(p.end);
  p.start = start;
  p.end = end;
}
