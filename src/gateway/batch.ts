// The interface document's batch envelope (capture, review, cancel, refund): merchant_id, account_id,
// encryption_data and one order array in; the same plus return_status, return_message and one
// result per order out. One bad order never fails the others.
import type { z } from "zod";
import { codes, GatewayError, resultInfo } from "../domain/codes.js";
import { orderOutcome } from "../domain/outcomes.js";
import type { Deps } from "../deps/deps.js";
import { findOrderTransaction, Refusal } from "../domain/lifecycle.js";
import { DECIMAL, list, withEnvelope } from "../http/fields.js";
import { type Body } from "../http/body.js";
import { text } from "../domain/field-text.js";
import { safeParse } from "../http/fast-parse.js";
import { recordHistory } from "../domain/history.js";
import { formatAmount } from "../domain/money.js";
import { notifyPayment } from "./notifying.js";
import type { Operation, OperationRequest } from "../http/operation.js";
import type { Decision } from "../scenarios/registry.js";
import type { Transaction } from "../domain/types.js";
import { gatewayOperation, type BatchOperationName } from "../domain/gateway-operations.js";

export interface OrderFields {
  transaction_id: string;
  order_no: string;
  currency: string;
  amount: string;
}

export interface BatchSpec<O extends OrderFields> {
  /** the catalogue's row (domain/gateway-operations.ts) holds its path, order list and limit */
  name: BatchOperationName;
  order: z.ZodType<O>;
  /** capture_status, review_status, ... */
  statusField: string;
  /** error_message, or refund_message for refunds */
  messageField: string;
  /** result key of the message on success; none leaves the message empty (error_message is "" when all went well) */
  successMessage?: string;
  /** request fields echoed in each result besides the identity fields */
  echo: readonly string[];
  /** Applies one valid order to its transaction: the extra result fields, or a refusal. */
  apply(order: O, tx: Transaction, request: OperationRequest, deps: Deps, decision: Decision): Refusal | { status?: string; fields?: Record<string, string> };
  /** the payment event notified to the transaction's notify_url when an order succeeds (e.g. payment.captured) */
  event?: (order: O) => string;
}

const IDENTITY = ["amount", "currency", "order_no", "transaction_id"] as const;

/** The outcome of an order no rule names: the operation simply happens. */
const DEFAULT_OUTCOME = { capture: "captured", cancel: "cancelled", review: "reviewed", refund: "accepted" } as const;

/** A batch operation, with the names of its order array and of each result's status and message (the portal reads them). */
export interface BatchOperation extends Operation {
  orders: NonNullable<Operation["orders"]>;
}

export function batchOperation<O extends OrderFields>(spec: BatchSpec<O>): BatchOperation {
  const { batch, ...row } = gatewayOperation(spec.name);
  const arrayField = batch.field;
  const ordersOf = (body: Body) => readOrders(body, arrayField, batch.limit);
  return {
    orders: { arrayField, statusField: spec.statusField, messageField: spec.messageField },
    ...row,
    request: withEnvelope({
      [arrayField]: list(spec.order).describe(`at most ${batch.limit} orders; a form may send them as a JSON string or with index keys`),
    }),
    emptyResult: { [arrayField]: [] },
    // the order list itself (each order's fields are that order's result, not the request's refusal)
    checkFields: ordersOf,
    handle(request, deps) {
      const orders = ordersOf(request.body);
      const rules = new Set<string>();
      const results = orders.map((raw) => runOrder(spec, raw, request, deps, rules));
      const failed = results.filter((r) => r[spec.statusField] === codes.batch_status.failed).length;
      return {
        json: {
          merchant_id: request.caller.merchant.merchant_id,
          account_id: request.caller.account.account_id,
          encryption_data: "",
          return_status: codes.return_status.ok,
          return_message: codes.return_status.ok_message,
          [arrayField]: results,
        },
        changed: failed < results.length,
        result: `${results.length - failed} of ${results.length} orders succeeded`,
        // X-Sandbox-Rule: the rules that decided the orders (the request's own rule when no order was valid)
        ...(rules.size ? { rule: [...rules].join(", ") } : {}),
      };
    },
  };
}

function runOrder<O extends OrderFields>(spec: BatchSpec<O>, raw: unknown, request: OperationRequest, deps: Deps, rules: Set<string>): Record<string, string> {
  const echoed = echo(spec, raw);
  const parsed = safeParse(spec.order, raw);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "order"} ${i.message}`).join("; ");
    return element(spec, echoed, codes.batch_status.failed, resultInfo("invalid_order", detail));
  }
  const order = parsed.data;
  const { merchant, account } = request.caller;
  const tx = findOrderTransaction(deps.store.records, merchant.merchant_id, account.account_id, order);
  // each order is decided on its own fields: a rule can fail one order of a batch and not the others
  const decision = request.decide(spec.name, order as unknown as Record<string, unknown>, order.order_no, DEFAULT_OUTCOME[spec.name]);
  rules.add(decision.rule);
  const forced = orderOutcome(spec.name, decision.outcome)?.refuse;
  const outcome = tx instanceof Refusal ? tx : forced ? forcedRefusal(forced) : spec.apply(order, tx, request, deps, decision);
  const message = spec.successMessage ? resultInfo(spec.successMessage) : "";
  if (!(tx instanceof Refusal)) {
    recordOrder(spec.name, tx, outcome, message, decision.rule, request);
    deps.store.records.changed("transactions", tx);
  }
  if (outcome instanceof Refusal) return element(spec, echoed, codes.batch_status.failed, outcome.info, decision.then.fields);
  if (spec.event && !(tx instanceof Refusal)) notifyPayment(deps, tx, spec.event(order), decision.then.notify);
  return element(spec, withAll(echoed, outcome.fields), outcome.status ?? codes.batch_status.ok, message, decision.then.fields);
}

/**
 * An order refused by a decision, with the gateway's own text only: the merchant parses error_message
 * and refund_message, so which rule decided is said in X-Sandbox-Rule, the log and the dashboard, never there.
 */
const forcedRefusal = (key: string): Refusal => new Refusal(key, "");

/** The order in its transaction's history: what was asked, how it ended, which rule decided. */
function recordOrder(
  name: string,
  tx: Transaction,
  outcome: Refusal | { fields?: Record<string, string> },
  message: string,
  rule: string,
  request: OperationRequest,
): void {
  const refused = outcome instanceof Refusal;
  const reference = refused ? "" : (outcome.fields?.refund_reference_id ?? "");
  recordHistory(tx, request.now, {
    // "capture", "refund RN…-01", "capture refused"
    event: refused ? `${name} refused` : reference ? `${name} ${reference}` : name,
    result: refused ? outcome.info : message || resultInfo("success"),
    rule,
    source: request.via,
    request_id: request.requestId,
  });
}

/**
 * The result element: identity and echoed fields, status and message, then a rule's `fields` (set
 * directly, the status and message too: a rule can give a gateway's own code and text); keys in
 * the interface document's (alphabetical) order.
 */
function element<O extends OrderFields>(
  spec: BatchSpec<O>,
  fields: Record<string, string>,
  status: string,
  message: string,
  ruleFields?: Record<string, string | number | boolean>,
): Record<string, string> {
  fields[spec.statusField] = status;
  fields[spec.messageField] = message;
  withAll(fields, ruleFields);
  const keys = Object.keys(fields);
  // the keys in order by an insertion sort, in place: an order's result has 6 to 10 keys, and a
  // batch sorts one per order, so no work array is allocated for it
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  const out: Record<string, string> = {};
  for (const k of keys) out[k] = fields[k]!;
  return out;
}

/** amounts come back with two places ("120" → "120.00") and currencies upper-case, like every answer */
const shown = (f: string, v: string) =>
  (f === "amount" || f === "refund_amount") && DECIMAL.test(v) ? formatAmount(v) : f === "currency" && /^[a-z]{3}$/i.test(v) ? v.toUpperCase() : v;

/** The fields an order's result echoes, per operation: the identity fields and the operation's own. */
const echoedFields = new WeakMap<object, readonly string[]>();

/** A fresh object of the order's echoed fields (callers add to it). */
function echo<O extends OrderFields>(spec: BatchSpec<O>, raw: unknown): Record<string, string> {
  const source = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  let fields = echoedFields.get(spec);
  if (!fields) echoedFields.set(spec, (fields = [...IDENTITY, ...spec.echo]));
  const out: Record<string, string> = {};
  for (const f of fields) out[f] = shown(f, text(source[f]));
  return out;
}

/** Adds a rule's or an outcome's fields to an order's result fields. */
const withAll = (fields: Record<string, string>, extra: Record<string, string | number | boolean> | undefined) => {
  if (extra) for (const [k, v] of Object.entries(extra)) fields[k] = String(v);
  return fields;
};

/** The order array: an array, an object with index keys (form bodies), or a JSON string. */
function readOrders(body: Body, field: string, limit: number): unknown[] {
  let value = body[field];
  if (typeof value === "string" && value.trim().startsWith("[")) {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      throw new GatewayError("malformed_body", `${field} is not a valid JSON array`, [{ field, message: "must be an array of orders" }]);
    }
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) value = Object.values(value);
  if (value === undefined || value === null || value === "") {
    throw new GatewayError("empty_batch", `${field} is missing`, [{ field, message: "is required" }]);
  }
  if (!Array.isArray(value)) throw new GatewayError("invalid_field", `${field} must be an array of orders`, [{ field, message: "must be an array of orders" }]);
  if (value.length === 0) throw new GatewayError("empty_batch", `${field} is empty`, [{ field, message: "must hold at least one order" }]);
  if (value.length > limit) {
    throw new GatewayError("batch_limit", `${value.length} orders sent, the limit is ${limit} per request`, [{ field, message: `at most ${limit} orders` }]);
  }
  return value;
}
