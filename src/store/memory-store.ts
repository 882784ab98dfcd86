// The store of one process: in memory by default; with --data, a lowdb snapshot file plus an append-only
// journal beside it (<file>.journal, see journal.ts).
// A unit of work is handed its view of the store (store.unit(work): work(view)); in one process that
// view is the store itself. Handlers change records through the view's `records` synchronously (Node
// runs one at a time, so a request's changes are atomic) and then `await commit()` before
// answering: the records the
// request changed are appended to the journal and synced, so an acknowledged change is on disk,
// at a cost that follows the change, not the state. The snapshot (lowdb's file, written through
// SnapshotFile: a slice at a time between requests, synced temp file + rename, never half-written)
// is rewritten when the journal has grown as large as it, behind the commits (see behind()), and
// at start, on reset and on close, with commits waiting.
import { randomBytes } from "node:crypto";
import { existsSync, statSync, unlinkSync } from "node:fs";
import { mkdir, open, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { Low, Memory } from "lowdb";
import { createIds } from "../domain/ids.js";
import { loadFixtures } from "./fixtures/fixtures.js";
import { NewerFormat, upgradeRecords, upgradeSnapshot } from "./state-formats.js";
import { resetMerchant, stateFromFixtures } from "./fixtures/initial-state.js";
import { lineEncoder, oldJournalPath, openJournal, replayJournal, type Journal } from "./journal.js";
import { SnapshotFile } from "./snapshot-file.js";
import { settingsFile } from "./settings-file.js";
import { createRepository } from "../domain/records.js";
import type { State } from "../domain/types.js";
import { byName, endsOf, groupCommit, StoreError, type Shelf, type ShelfEnds, type Store } from "./store.js";

/** A shelf in memory (the default store's, and tests'). */
function memoryShelf(): Shelf {
  const texts = new Map<string, string>();
  return {
    put: async (name, text) => void texts.set(name, text),
    get: async (name) => texts.get(name),
    ends: async () => [...texts].map(([name, text]) => endsOf(name, text)).sort(byName),
    remove: async (name) => texts.delete(name),
  };
}

/** A file's first and last line, read from its two ends (a state file's header is under 64 KB); undefined when it went meanwhile. */
async function fileEnds(name: string, path: string): Promise<ShelfEnds | undefined> {
  const handle = await open(path, "r").catch(() => undefined);
  if (!handle) return undefined;
  try {
    const { size } = await handle.stat();
    const read = async (at: number, length: number) => {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, at);
      return buffer.toString("utf8", 0, bytesRead);
    };
    const END = 64 * 1024;
    if (size <= 2 * END) return endsOf(name, await read(0, size));
    const head = await read(0, END);
    const tail = await read(size - END, END);
    return { name, first: head.slice(0, head.includes("\n") ? head.indexOf("\n") : undefined), last: endsOf(name, tail).last };
  } finally {
    await handle.close();
  }
}

/** A shelf in a folder: one file per name (written whole: a temporary file, then renamed). */
function folderShelf(dir: string): Shelf {
  const file = (name: string) => join(dir, `${name}.ndjson`);
  return {
    async put(name, text) {
      await mkdir(dir, { recursive: true });
      const temp = `${file(name)}.${randomBytes(4).toString("hex")}.tmp`;
      await writeFile(temp, text);
      await rename(temp, file(name));
    },
    get: async (name) => readFile(file(name), "utf8").catch(() => undefined),
    async ends() {
      const names = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith(".ndjson")).map((f) => f.slice(0, -".ndjson".length));
      return (await Promise.all(names.map((name) => fileEnds(name, file(name))))).filter((e) => e !== undefined).sort(byName);
    },
    remove: async (name) =>
      rm(file(name)).then(
        () => true,
        () => false,
      ),
  };
}

export interface StoreOptions {
  fixturesDir: string;
  dataFile: string | undefined;
  seed: string | undefined;
  /** the journal size that starts a new snapshot, when the snapshot is smaller (default MIN_SNAPSHOT_AFTER_BYTES) */
  snapshotAfterBytes?: number | undefined;
  /**
   * Told when a snapshot written behind the commits fails. Nothing is lost (the journals still
   * hold every change), and the next snapshot is written with the commits waiting, whose failure
   * the commit itself reports.
   */
  onSnapshotBehindFailed?: ((err: Error) => void) | undefined;
  /** does a scenario name this card number? A state file from before keeps full numbers: they become fingerprints (named) or nothing */
  namesCard?: ((number: string) => boolean) | undefined;
}

/** A --data file that cannot be written, with what to do about it (the Docker image runs as uid 1000). */
function unwritable(file: string, err: NodeJS.ErrnoException): StoreError {
  const dir = dirname(resolve(file));
  const uid = process.getuid?.() ?? -1;
  const who = uid === 1000 ? "uid 1000 (user node, as in the Docker image)" : `uid ${uid}`;
  const remedy =
    err.code === "ENOENT" || err.code === "ENOTDIR"
      ? `the folder ${dir} does not exist: create it, or pick another --data file`
      : `Sandgate runs as ${who} and needs to write in ${dir}: give that uid write access (for a host folder mounted in Docker: chown ${uid < 0 ? 1000 : uid} <host folder>, or docker run --user "$(id -u)"), use a named volume (-v sandgate-data:${dir}), or pick another --data file`;
  const cause = err.code && !err.message.startsWith(err.code) ? `${err.code}: ${err.message}` : err.message;
  return new StoreError(`${file}: cannot write state (${cause}); ${remedy}`);
}

/** The journal is folded into a new snapshot once it is this large and as large as the snapshot. */
const MIN_SNAPSHOT_AFTER_BYTES = 4 * 1024 * 1024;

export async function openStore(options: StoreOptions): Promise<Store> {
  const fixtures = loadFixtures(options.fixturesDir);
  const fresh = stateFromFixtures(fixtures, options.seed ?? randomBytes(8).toString("hex"));
  const dataFile = options.dataFile;
  const journalFile = dataFile && `${dataFile}.journal`;
  // compact JSON (the file is for Sandgate to read back), written a slice at a time between requests;
  // a record written with changes not yet committed (they may be undone before the commit, leaving no
  // line) is journaled whole at its next commit
  const uncommittedWholeNext = (record: unknown): boolean => {
    const uncommitted = records.hasChanges(record as object);
    if (uncommitted) lines.wholeNext(record as object);
    return uncommitted;
  };
  const file: SnapshotFile | undefined = dataFile ? new SnapshotFile(dataFile, uncommittedWholeNext) : undefined;
  const db = new Low<State>(file ?? new Memory<State>(), fresh);

  if (dataFile && existsSync(dataFile) && statSync(dataFile).size > 0) {
    try {
      await db.read();
    } catch (err) {
      throw new StoreError(`${dataFile}: cannot read state (${(err as Error).message}); move it away or pick another --data file`);
    }
    try {
      upgradeSnapshot(db.data!);
    } catch (err) {
      const remedy = err instanceof NewerFormat ? "start the Sandgate that wrote it, or pick another --data file" : "move it away or pick another --data file";
      throw new StoreError(`${dataFile}: ${(err as Error).message}; ${remedy}`);
    }
    if (options.seed !== undefined) db.data.seed = options.seed;
  }
  // a journal kept for a snapshot that was being written when the process stopped comes first
  for (const path of journalFile ? [oldJournalPath(journalFile), journalFile] : []) {
    try {
      replayJournal(path, db.data);
    } catch (err) {
      if (err instanceof NewerFormat) throw new StoreError(`${path}: ${err.message}; start the Sandgate that wrote it`);
      throw new StoreError(`${path}: cannot replay (${(err as Error).message}); move it away to start from ${dataFile} alone`);
    }
  }

  // what an earlier format kept differently is brought up to date; the snapshot written below
  // (before anything else) rewrites the file in today's format and empties the journal
  upgradeRecords(db.data, options.namesCard ?? (() => false));

  const state = () => db.data;
  let ids = createIds(state().seed, state().counters);
  const lines = lineEncoder();
  // a payment or refund looked up is imaged by the journal (only with --data), so its change goes as the fields it changed
  const repository = () => createRepository(state(), dataFile ? lines.image : undefined);
  let records = repository();
  let journal: Journal | undefined;
  let snapshotBytes = 0;
  let closed = false;
  /** a snapshot being written while commits go on into a new journal (see behind()) */
  let behindWrite: Promise<void> | undefined;
  /** one written behind failed: the kept journal still holds its lines, so the next snapshot is a whole one */
  let behindFailed = false;

  /** the changes since the last commit; the snapshot file then knows those records are not as it last wrote them */
  const taken = () => {
    const changes = records.takeChanges();
    if (file) for (const { v } of changes) file.changed(v);
    return changes;
  };

  /** The whole state as the new snapshot, commits waiting; the journal is then empty. */
  async function snapshot(): Promise<void> {
    if (!dataFile) return;
    await behindWrite;
    // the snapshot has every record as it is now (commits wait for it), those changed since the
    // last commit too: nothing is left to journal, and an image taken before such a change is not
    // what the snapshot has, so every image goes (the next lookup takes one of what it has)
    const changes = taken();
    lines.forget();
    try {
      await db.write();
    } catch (err) {
      // not on disk: changes still, for the next commit to journal (whole)
      records.returnChanges(changes);
      throw err;
    }
    snapshotBytes = statSync(dataFile).size;
    await journal?.clear();
    behindFailed = false;
  }

  /**
   * The journal has grown as large as the snapshot: a new snapshot is written behind the commits.
   * The journal so far is kept aside (replayed before the journal at start) and commits go on into
   * a new one; the snapshot is written a slice at a time between requests, so records may change
   * while it is written: it can have a record as it was at any moment since the journal was kept
   * aside, and replaying the new journal over it (every change since then, in order, each line
   * setting what it changed) ends at the state as committed; a record written with changes not yet
   * committed goes whole at its next commit (uncommittedWholeNext). Once the snapshot is whole on
   * disk, the kept journal goes.
   */
  async function behind(): Promise<void> {
    await journal!.rotate();
    behindWrite = (async () => {
      try {
        await db.write();
        snapshotBytes = statSync(dataFile!).size;
        await journal?.dropOld();
      } catch (err) {
        behindFailed = true;
        options.onSnapshotBehindFailed?.(err as Error);
      } finally {
        behindWrite = undefined;
      }
    })();
  }

  try {
    // what was replayed becomes the snapshot, so the journal starts empty
    if (journalFile) journal = await openJournal(journalFile);
    await snapshot();
  } catch (err) {
    throw unwritable(dataFile!, err as NodeJS.ErrnoException);
  }

  const settings = dataFile ? settingsFile(`${dataFile}.settings.json`) : undefined;
  const write = serialised(async () => {
    settings?.save();
    const changes = taken();
    // after close (a notification attempt that finished late, say) each commit is a snapshot
    if (closed && changes.length) return snapshot();
    if (!journal) return;
    const appended: string[] = [];
    for (const { c, v } of changes) {
      const line = lines.line(c, v);
      if (line !== undefined) appended.push(line);
    }
    lines.committed();
    appended.push(JSON.stringify({ counters: state().counters }));
    try {
      await journal.append(appended);
    } catch (err) {
      // these lines may not be on disk: no image may count on them (one taken since may have), and
      // their records are changes again, to be journaled whole by the next commit
      lines.forget();
      records.returnChanges(changes);
      throw err;
    }
    if (behindWrite || journal.size < Math.max(snapshotBytes, options.snapshotAfterBytes ?? MIN_SNAPSHOT_AFTER_BYTES)) return;
    await (behindFailed ? snapshot() : behind());
  });

  async function restore(to: State, merchantId?: string): Promise<void> {
    if (merchantId === undefined) {
      // the counters go on from the highest of the two (the ids issued so far, and the state's): no id comes back
      for (const [kind, n] of Object.entries(state().counters)) if ((to.counters[kind] ?? 0) < n) to.counters[kind] = n;
      db.data = to;
      ids = createIds(to.seed, to.counters);
    } else resetMerchant(state(), to, merchantId);
    records = repository();
    await write.exclusive(snapshot);
  }

  // one process: every unit sees every record, so a unit's view is the store itself
  const store: Store = {
    kind: dataFile ? "file" : "memory",
    unit: async (work) => work(store),
    locate: async () => undefined,
    dueScopes: async () => [undefined],
    share: (parts) => settings?.share(parts),
    get data() {
      return state();
    },
    get ids() {
      return ids;
    },
    get records() {
      return records;
    },
    commit: groupCommit(write),
    reset: (merchantId?: string) => restore(stateFromFixtures(fixtures, state().seed), merchantId),
    restore,
    // beside the --data file (<file>.snapshots/), or in memory
    snapshots: dataFile ? folderShelf(`${dataFile}.snapshots`) : memoryShelf(),
    async close() {
      await write.exclusive(snapshot);
      await journal?.close();
      if (journalFile && existsSync(journalFile)) unlinkSync(journalFile);
      // (snapshot() dropped the kept one)
      journal = undefined;
      closed = true;
    },
  };
  return store;
}

/** A write that never overlaps another one; `exclusive` runs something else in the same line. */

function serialised(write: () => Promise<void>): (() => Promise<void>) & { exclusive(run: () => Promise<void>): Promise<void> } {
  let tail: Promise<void> = Promise.resolve();
  const queue = (run: () => Promise<void>) => {
    const next = tail.then(run, run);
    tail = next.catch(() => undefined);
    return next;
  };
  return Object.assign(() => queue(write), { exclusive: queue });
}
