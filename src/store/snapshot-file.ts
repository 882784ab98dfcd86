// The --data snapshot as lowdb's adapter (lowdb reads and writes it through this). Read whole; written
// a slice of records at a time, with the requests waiting answered between slices, so a snapshot
// of 100,000 payments (~130 MB of JSON, ~0.5 s to stringify) never holds the server for more than
// a millisecond or so. The slices go to a temp file that is synced and then renamed over the
// snapshot: a crash leaves the old snapshot or the new one, whole.
import { open, readFile, rename, type FileHandle } from "node:fs/promises";
import type { Adapter } from "lowdb";
import type { State } from "./types.js";

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
export async function writeWhole(handle: FileHandle, text: string): Promise<number> {
  const bytes = Buffer.from(text);
  for (let done = 0; done < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done);
    if (bytesWritten === 0) throw new Error("the file takes no more bytes");
    done += bytesWritten;
  }
  return bytes.length;
}

/**
 * The state as JSON text, in slices: each list a slice of records at a time, then the other fields
 * (the id counters among them) last, so they are read after every record was.
 */
function* slicesOf(state: State, onSlice: (records: readonly unknown[]) => void): Generator<string> {
  const fields = Object.entries(state);
  let opened = false;
  const key = (name: string) => `${opened ? "," : "{"}${JSON.stringify(name)}:`;
  for (const [name, value] of fields) {
    if (!Array.isArray(value)) continue;
    const list: unknown[] = value;
    let text = `${key(name)}[`;
    opened = true;
    for (let at = 0; at < list.length; at += RECORDS_PER_SLICE) {
      const records = list.slice(at, at + RECORDS_PER_SLICE);
      onSlice(records);
      const slice = JSON.stringify(records);
      yield `${text}${at ? "," : ""}${slice.slice(1, -1)}`;
      text = "";
    }
    yield `${text}]`;
  }
  for (const [name] of fields) {
    // read now, not when the walk began: records added meanwhile have their ids counted
    const value = (state as unknown as Record<string, unknown>)[name];
    if (Array.isArray(value) || value === undefined) continue;
    yield `${key(name)}${JSON.stringify(value)}`;
    opened = true;
  }
  yield opened ? "}" : "{}";
}

export class SnapshotFile implements Adapter<State> {
  /** `onSlice`: told which records go into the file next, as they are at that moment */
  constructor(
    private readonly path: string,
    private readonly onSlice: (records: readonly unknown[]) => void = () => undefined,
  ) {}

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
    const handle = await open(temp, "w");
    try {
      for (const slice of slicesOf(state, this.onSlice)) {
        await writeWhole(handle, slice);
        await turnForRequests();
      }
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, this.path);
  }
}
