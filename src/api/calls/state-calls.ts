// Operator calls: The sandbox's whole state: export, import, snapshots, reset.
// Entries of the one table (src/api/operator-calls.ts); see OperatorCall for what each field means.
import { z } from "zod";
import { MALFORMED, type OperatorCall } from "../operator-call.js";
import { int, snapshotInfo } from "../operator-answers.js";
import { resetBody, restoreBody, snapshotBody } from "../operator-bodies.js";

const s = z.string();

export const STATE_CALLS = [
  {
    method: "get",
    path: "/__sandbox/state",
    operationId: "exportState",
    scope: "all",
    summary: "the state as a file to move or keep: NDJSON, versioned, one line per record (docs/state.md); merchant_id: one merchant's",
    query: { merchant_id: "one merchant's records only (default: every merchant's)" },
    answer: z.string().describe("the state file"),
    text: "application/x-ndjson",
    problems: { 404: "merchant_not_found" },
  },
  {
    method: "put",
    path: "/__sandbox/state",
    operationId: "importState",
    scope: "all",
    summary:
      "replaces the state with a file GET /__sandbox/state wrote: the one merchant the file holds, or, with all=true, every merchant and the clock; nothing changes when the file is refused",
    query: { all: "true: needed when the file holds every merchant (it replaces every merchant's records and the clock)" },
    answer: z.strictObject({
      merchant: s.nullable().describe("the merchant the file held, or null: everything was replaced"),
      records: z.record(s, int).describe("records imported, per collection"),
    }),
    body: "raw",
    problems: {
      400: "invalid_state_file: not a state file, another version, cut short, or a record that is not one (the line and the reason); all_required: the file holds every merchant and all=true was not given",
      413: "body_too_large: the file is larger than 64 MB",
    },
  },
  {
    method: "get",
    path: "/__sandbox/snapshots",
    operationId: "listSnapshots",
    scope: "none",
    summary: "the QA snapshots kept, newest first",
    answer: z.strictObject({ snapshots: z.array(snapshotInfo) }),
  },
  {
    method: "put",
    path: "/__sandbox/snapshots/{name}",
    operationId: "saveSnapshot",
    scope: "all",
    form: "/__sandbox/ui/snapshots",
    summary: 'keeps the state (or one merchant\'s: {"merchant_id":"M1"}) under a name, replacing one of the same name',
    answer: z.strictObject({ snapshot: snapshotInfo }),
    body: snapshotBody,
    problems: { 400: `invalid_name: 1 to 64 letters, digits, _ . -; ${MALFORMED}`, 404: "merchant_not_found" },
  },
  {
    method: "post",
    path: "/__sandbox/snapshots/{name}/restore",
    operationId: "restoreSnapshot",
    scope: "all",
    form: "/__sandbox/ui/snapshots/{name}/restore",
    summary: 'puts the state kept under that name back: the one merchant it holds, or, with {"all":true}, every merchant and the clock',
    answer: z.strictObject({ snapshot: snapshotInfo }),
    body: restoreBody,
    problems: { 400: `all_required: the snapshot holds every merchant and the body did not say {"all":true}; ${MALFORMED}`, 404: "snapshot_not_found" },
  },
  {
    method: "delete",
    path: "/__sandbox/snapshots/{name}",
    operationId: "deleteSnapshot",
    scope: "none",
    form: "/__sandbox/ui/snapshots/{name}/delete",
    summary: "forgets a snapshot",
    answer: z.strictObject({ deleted: s }),
    problems: { 404: "snapshot_not_found" },
  },
  {
    method: "post",
    path: "/__sandbox/reset",
    operationId: "resetState",
    form: "/__sandbox/ui/reset",
    scope: "all",
    body: resetBody,
    summary: 'back to the fixtures: {} for all, {"merchant_id":"M1"} for one',
    answer: z.strictObject({ reset: s.describe('the merchant, or "all"') }),

    problems: { 400: `invalid_merchant_id: merchant_id is not a string; ${MALFORMED}` },
  },
] as const satisfies readonly OperatorCall[];
