// QA snapshots: the state (or one merchant's) kept under a name where the state is kept (the
// store's shelf: memory, a folder beside --data, a Redis hash), listed, put back, forgotten. A
// snapshot is a state file (store/state-export.ts), so putting it back is an import of it.
// The operator calls and the dashboard's forms (dashboard/dashboard.ts) share these actions.
import type { Deps } from "../deps/deps.js";
import { depsOf } from "../http/in-unit.js";
import { STATE_VERSION, type State } from "../domain/types.js";
import { applyDue } from "../schedule/scheduler.js";
import { readStateFile, StateFileError, writeStateFile, type StateFile } from "../store/state-export.js";
import { endsOf, type ShelfEnds } from "../store/store.js";
import type { Done } from "./actions.js";
import type { On } from "./call-handlers.js";
import { answerJson, pathParam } from "./shared.js";

export interface SnapshotInfo {
  name: string;
  merchant: string | null;
  saved_at: string;
  records: number;
}

const NAME = /^[\w.-]{1,64}$/;
const badName = (name: string): Done<never> => ({
  problem: { status: 400, error: "invalid_name", message: `"${name}" is not a snapshot name: 1 to 64 letters, digits, _ . -` },
});
const notFound = (name: string): Done<never> => ({ problem: { status: 404, error: "snapshot_not_found", message: `no snapshot "${name}"` } });

/** What a kept file says of itself: its header's merchant and time (its first line), its end line's count (its last). */
function infoOf({ name, first, last }: ShelfEnds): SnapshotInfo {
  const header = JSON.parse(first) as { merchant: string | null; exported_at: string };
  const end = /^\{"end":\{"records":(\d+)\}\}$/.exec(last);
  return { name, merchant: header.merchant, saved_at: header.exported_at, records: Number(end?.[1] ?? 0) };
}

/** Read from each snapshot's first and last line: a list never reads whole files. */
export async function listSnapshots(deps: Deps): Promise<SnapshotInfo[]> {
  const all = (await deps.store.snapshots.ends()).map(infoOf);
  return all.sort((a, b) => b.saved_at.localeCompare(a.saved_at) || a.name.localeCompare(b.name));
}

export async function saveSnapshot(deps: Deps, name: string, merchant: string | undefined): Promise<Done<SnapshotInfo>> {
  if (!NAME.test(name)) return badName(name);
  if (merchant !== undefined && !deps.store.records.merchant(merchant))
    return { problem: { status: 404, error: "merchant_not_found", message: `no merchant ${merchant}` } };
  const text = await currentStateFile(deps, merchant ?? null);
  await deps.store.snapshots.put(name, text);
  return { value: infoOf(endsOf(name, text)) };
}

/**
 * A file of every merchant replaces every merchant's records (on a shared instance, other teams'
 * too) and the clock: it is put back only when the caller said `all`, as a reset of everything is.
 */
export const allRequired = (what: string, how: string): Done<never> => ({
  problem: {
    status: 400,
    error: "all_required",
    message: `${what} holds every merchant: putting it back replaces every merchant's records (other teams' too) and the clock; ${how}`,
  },
});

/** `all`: the caller said so, for a snapshot of every merchant. */
export async function restoreSnapshot(deps: Deps, name: string, all: boolean): Promise<Done<SnapshotInfo>> {
  const text = NAME.test(name) ? await deps.store.snapshots.get(name) : undefined;
  if (text === undefined) return notFound(name);
  const file = readStateFile(text);
  if (file.header.merchant === null && !all) return allRequired(`snapshot "${name}"`, `send {"all": true} (sandgate ctl snapshot restore ${name} --all)`);
  await putBack(deps, file);
  return { value: infoOf(endsOf(name, text)) };
}

/** The state as it is now (what fell due applied first) as a file: every merchant's, or one's. */
export async function currentStateFile(deps: Deps, merchant: string | null): Promise<string> {
  await applyDue(deps);
  return writeStateFile(deps.store.data, {
    merchant,
    exportedAt: deps.clock.now().toISOString(),
    clock: deps.clock.setting(),
    scenarios: deps.scenarios.own(),
  });
}

/** A state file read whole, put in place of the state: all of it (the clock too), or the one merchant it holds. */
export async function putBack(deps: Deps, { header, records }: StateFile): Promise<void> {
  const to: State = { version: STATE_VERSION, seed: header.seed, counters: { ...header.counters }, ...records };
  // the scenarios it brings are checked first: one that is not valid here refuses the file, and nothing changes
  const scenarios = Object.entries(header.scenarios ?? {});
  for (const [name, text] of scenarios) {
    const problem = deps.scenarios.check(text).problems[0];
    if (problem) throw new StateFileError(1, `the header's scenario "${name}"${problem.line ? ` (line ${problem.line})` : ""}: ${problem.message}`);
  }
  if (header.merchant === null) {
    for (const [, text] of scenarios) deps.scenarios.save(text);
    await deps.store.restore(to);
    deps.clock.adopt({ offset_ms: header.clock_offset_ms, ...(header.clock_frozen_at_ms === undefined ? {} : { frozen_at: header.clock_frozen_at_ms }) });
    await deps.store.commit(); // the clock (with a shared store, every replica's)
  } else await deps.store.restore(to, header.merchant);
}

export async function deleteSnapshot(deps: Deps, name: string): Promise<Done<string>> {
  return NAME.test(name) && (await deps.store.snapshots.remove(name)) ? { value: name } : notFound(name);
}

export function snapshotsApi(server: Deps, on: On): void {
  on("listSnapshots", async (_req, res) => {
    res.json({ snapshots: await listSnapshots(depsOf(res, server)) });
  });
  on("saveSnapshot", async (req, res) => {
    const merchant = (req.body as { merchant_id?: string } | undefined)?.merchant_id;
    answerJson(res, await saveSnapshot(depsOf(res, server), pathParam(req, "name"), merchant), (snapshot) => ({ snapshot }));
  });
  on("restoreSnapshot", async (req, res) => {
    const all = (req.body as { all?: true } | undefined)?.all === true;
    answerJson(res, await restoreSnapshot(depsOf(res, server), pathParam(req, "name"), all), (snapshot) => ({ snapshot }));
  });
  on("deleteSnapshot", async (req, res) => answerJson(res, await deleteSnapshot(depsOf(res, server), pathParam(req, "name")), (deleted) => ({ deleted })));
}
