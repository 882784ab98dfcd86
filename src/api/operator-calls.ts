// The operator API (/__sandbox): the one table of its calls, put together from calls/*.ts (one file
// per group of calls). Each entry is a call's method, path, operationId, query parameters, what it
// answers (zod schemas of what the routes in src/admin and src/pages send) and the refusals it really
// makes (see OperatorCall). test/openapi.test.ts validates real answers against the document made
// from it; the payer pages' (/pay) schemas are in operator-answers.ts.
import type { OperatorCall } from "./operator-call.js";
import { CLOCK_CALLS } from "./calls/clock-calls.js";
import { NOTIFICATION_CALLS } from "./calls/notification-calls.js";
import { RECORD_CALLS } from "./calls/record-calls.js";
import { REQUEST_CALLS } from "./calls/request-calls.js";
import { SCENARIO_CALLS } from "./calls/scenario-calls.js";
import { STATE_CALLS } from "./calls/state-calls.js";

/**
 * The operator API, one entry per call: the one table the router (server/operator.ts: each call's
 * scope, body check and handler), the OpenAPI document, the typed client (client.ts call()) and
 * ctl's calls (ctl call <operationId>) are made from. Adding a call is an entry in its group's file
 * (calls/*.ts) and its handler.
 */
const OPERATOR = [
  ...REQUEST_CALLS,
  ...CLOCK_CALLS,
  ...RECORD_CALLS,
  ...NOTIFICATION_CALLS,
  ...SCENARIO_CALLS,
  ...STATE_CALLS,
] as const satisfies readonly OperatorCall[];

/** The table's entries, each with its own literal types (the typed client's calls are made from them). */
export type OperatorEntry = (typeof OPERATOR)[number];
/** An operator call's operationId: the key of its handler, its client call and its ctl call. */
export type OperatorCallId = OperatorEntry["operationId"];

/** The table as plain entries, for whatever goes through every call. */
export const OPERATOR_CALLS: readonly (OperatorCall & { operationId: OperatorCallId })[] = OPERATOR;

const BY_ID = new Map(OPERATOR_CALLS.map((c) => [c.operationId, c]));
/** A call's table entry by its operationId. */
export const operatorCall = (id: OperatorCallId) => BY_ID.get(id)!;

/** The names in a path's braces: "/payments/{transaction_id}/complete" → "transaction_id". */
export type ParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}` ? N | ParamNames<Rest> : never;
type CallOf<Id extends OperatorCallId> = Extract<OperatorEntry, { operationId: Id }>;
type FormCallId = Extract<OperatorEntry, { form: string }>["operationId"];

const filled = (path: string, params: Record<string, string | undefined>) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));

/** A call's path with its parameters put in (encoded): callPath("listNotifications") is /__sandbox/notifications. */
export const callPath = <Id extends OperatorCallId>(id: Id, params: Partial<Record<ParamNames<CallOf<Id>["path"]>, string>> = {}): string =>
  filled(operatorCall(id).path, params as Record<string, string>);

/** The dashboard's form (the /ui/ twin) of a call, its parameters put in: what a page's <form action> posts to. */
export const formPath = <Id extends FormCallId>(
  id: Id,
  params: Partial<Record<ParamNames<Extract<CallOf<Id>, { form: string }>["form"]>, string>> = {},
): string => filled(operatorCall(id).form!, params as Record<string, string>);
