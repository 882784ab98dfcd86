// The transaction query and the refund search: which records a query names, and the operation
// both are (selectionOperation, at the end).
// docs/operations.md (transaction query): select by order_no, transaction_id (and refund_reference_id for refunds): one value,
// a comma-separated list, or the field repeated (a JSON array, or a form field sent twice, which qs
// turns into an array); with none, the most recent records of the account. Optional
// start_date/end_date (YYYYMMDDhhmmss, both inclusive to the second). Always scoped to the caller's
// merchant_id and account_id: another merchant's or account's record is "not found", never shown.
import { counted } from "../base/words.js";
import { codes, GatewayError, type FieldProblem } from "../domain/codes.js";
import { parseCompactDate } from "../domain/dates.js";
import { fail, withEnvelope } from "../http/fields.js";
import { type Body } from "../http/body.js";
import { z } from "zod";
import type { Operation } from "../http/operation.js";
import type { Deps } from "../deps/deps.js";
import { gatewayOperation } from "../domain/gateway-operations.js";

export type SelectorField = "order_no" | "transaction_id" | "refund_reference_id";

/**
 * The selection's body, for the OpenAPI document: readSelection below reads it (lists, dates and
 * limits need more than a schema says), and this is what it accepts.
 */
export function selectionRequest(fields: readonly SelectorField[]) {
  const values = z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe("one value, a comma-separated list, or the field repeated");
  const date = z
    .string()
    .regex(/^\d{14}$/)
    .optional()
    .describe("YYYYMMDDhhmmss, inclusive");
  return withEnvelope({ ...Object.fromEntries(fields.map((f) => [f, values])), start_date: date, end_date: date });
}

interface Selector<F extends SelectorField = SelectorField> {
  field: F;
  value: string;
}

export interface Selection<F extends SelectorField> {
  /** the values asked for, in request order, each once; empty means "the most recent" */
  selectors: Selector<F>[];
  from: Date | undefined;
  to: Date | undefined;
  /** the operation's limit: most selected values, and most records listed when none is selected */
  limit: number;
}

/** A selected value that matched nothing is reported too, so the merchant sees which one. */
export type Selected<T, F extends SelectorField> = { record: T } | { missing: Selector<F> };

const LIST_MESSAGE = "must be a value, a comma-separated list of values, or the field repeated";

/** Reads the selectors and the date bounds; throws a 400 naming the bad field, or the limit error. */
export function readSelection<F extends SelectorField>(body: Body, fields: readonly F[], limit: number): Selection<F> {
  const problems: FieldProblem[] = [];
  const selectors: Selector<F>[] = [];
  for (const field of fields) {
    const values = listValues(body[field]);
    if (values === undefined) problems.push({ field, message: LIST_MESSAGE });
    for (const value of new Set(values)) selectors.push({ field, value });
  }
  const from = readDate(body, "start_date", problems);
  const to = readDate(body, "end_date", problems);
  if (from && to && to.getTime() < from.getTime()) problems.push({ field: "end_date", message: "must not be before start_date" });
  if (problems.length) fail(problems);
  if (selectors.length > limit) {
    throw new GatewayError("batch_limit", `${selectors.length} values selected (${fields.join(", ")}); the limit is ${limit} per request`);
  }
  return { selectors, from, to, limit };
}

/** The values of one selector field; undefined when its shape is not a value or a list of values. */
function listValues(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === null) return [];
  const items = Array.isArray(raw) ? raw : isIndexedObject(raw) ? Object.values(raw) : [raw];
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== "string" && typeof item !== "number") return undefined;
    for (const part of String(item).split(",")) if (part.trim() !== "") out.push(part.trim());
  }
  return out;
}

/** qs turns a field repeated more than its arrayLimit times into {"0": ..., "1": ...}. */
function isIndexedObject(raw: unknown): raw is Record<string, unknown> {
  return typeof raw === "object" && raw !== null && Object.keys(raw).every((k) => /^\d+$/.test(k));
}

function readDate(body: Body, field: string, problems: FieldProblem[]): Date | undefined {
  const raw = body[field];
  if (raw === undefined || raw === null || raw === "") return undefined;
  const date = typeof raw === "string" || typeof raw === "number" ? parseCompactDate(String(raw).trim()) : undefined;
  if (!date) problems.push({ field, message: "must be a date and time YYYYMMDDhhmmss, such as 20261001000000" });
  return date;
}

type Scoped<F extends SelectorField> = { merchant_id: string; account_id: string } & Record<F, string>;

/** Where the records come from: by a selected value (an index lookup), or the account's, oldest first. */
export interface RecordLookup<F extends SelectorField, T> {
  named(field: F, value: string): readonly T[];
  recent(): readonly T[];
}

/**
 * The records a selection names, newest first within each selected value, each record once;
 * with no selector, the `limit` most recent records of the account. `dateOf` gives the record's
 * date (ISO 8601) for the date bounds and the ordering. Only the records the lookup names are
 * looked at: the cost follows what was selected, not how many records exist.
 */
export function selectRecords<F extends SelectorField, T extends Scoped<F>>(
  lookup: RecordLookup<F, T>,
  selection: Selection<F>,
  scope: { merchant_id: string; account_id: string },
  dateOf: (record: T) => string,
): Selected<T, F>[] {
  const named = selection.selectors.length ? [...new Set(selection.selectors.flatMap((sel) => lookup.named(sel.field, sel.value)))] : lookup.recent();
  const candidates = newestFirst(
    named.filter((r) => r.merchant_id === scope.merchant_id && r.account_id === scope.account_id && withinBounds(Date.parse(dateOf(r)), selection)),
    dateOf,
  );
  if (selection.selectors.length === 0) return candidates.slice(0, selection.limit).map((record) => ({ record }));

  const seen = new Set<T>();
  const out: Selected<T, F>[] = [];
  for (const selector of selection.selectors) {
    const matches = candidates.filter((r) => r[selector.field] === selector.value);
    if (matches.length === 0) out.push({ missing: selector });
    for (const record of matches) {
      if (seen.has(record)) continue;
      seen.add(record);
      out.push({ record });
    }
  }
  return out;
}

function withinBounds(time: number, { from, to }: { from: Date | undefined; to: Date | undefined }): boolean {
  if (from && time < from.getTime()) return false;
  // end_date names a whole second: a record at 12:00:00.400 is within end_date 20261001120000
  if (to && time >= to.getTime() + 1000) return false;
  return true;
}

/** Newest first; records of the same instant in reverse order of creation (the store appends). */
function newestFirst<T>(records: T[], dateOf: (record: T) => string): T[] {
  return records
    .map((record, index) => ({ record, index, time: Date.parse(dateOf(record)) }))
    .sort((a, b) => b.time - a.time || b.index - a.index)
    .map((e) => e.record);
}

/** What a search found, for the request log: "2 orders matched", "no order matched (1 named not found)". */
export const searchResult = (found: number, noun: string, missing: number): string =>
  `${found ? counted(found, noun) : `no ${noun}`} matched${missing ? ` (${missing} named not found)` : ""}`;

type Records = Deps["store"]["records"];
type Scope = { merchant_id: string; account_id: string };

/**
 * A search operation (the transaction query, the refund search): the selection read, the records
 * it names in the caller's account listed under `listField`, and what it found for the request log.
 */
export function selectionOperation<F extends SelectorField, T extends Scoped<F>>(spec: {
  name: "retrievalTrans" | "retrievalRefund";
  selectors: readonly F[];
  limit: number;
  listField: string;
  /** what the request log counts: "order", "refund" */
  noun: string;
  lookup(records: Records, scope: Scope): RecordLookup<F, T>;
  dateOf(record: T): string;
  /** the listed elements: each found record's (and a missing value's, where the answer shows one) */
  list(selected: Selected<T, F>[], records: Records): unknown[];
}): Operation {
  const readSelected = (body: Body) => readSelection(body, spec.selectors, spec.limit);
  return {
    ...gatewayOperation(spec.name),
    request: selectionRequest(spec.selectors),
    emptyResult: { [spec.listField]: [] },
    checkFields: readSelected,
    handle({ body, caller }, deps) {
      const selection = readSelected(body);
      const scope = { merchant_id: caller.merchant.merchant_id, account_id: caller.account.account_id };
      const { records } = deps.store;
      const selected = selectRecords(spec.lookup(records, scope), selection, scope, spec.dateOf);
      const found = selected.filter((s) => "record" in s).length;
      const json = {
        ...scope,
        encryption_data: "",
        return_status: codes.return_status.ok,
        return_message: codes.return_status.ok_message,
        [spec.listField]: spec.list(selected, records),
      };
      return { json, changed: false, result: `${codes.return_status.ok_message}: ${searchResult(found, spec.noun, selected.length - found)}` };
    },
  };
}
