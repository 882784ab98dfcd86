// The seed's batch envelope (capture, review, cancel, refund): merchant_id, account_id,
// encryption_data and one order array in; the same plus return_status, return_message and one
// result per order out. One bad order never fails the others.
import type { z } from "zod";
import { codes, GatewayError, resultInfo } from "../codes.js";
import type { Deps } from "../deps.js";
import { findOrderTransaction, Refusal } from "../domain/lifecycle.js";
import type { Body } from "../http/body.js";
import { text } from "../http/fields.js";
import type { Operation, OperationRequest } from "../http/operation.js";
import type { SignedOperation } from "../signature/signature.js";
import type { Transaction } from "../store/types.js";

export interface OrderFields {
  transaction_id: string;
  order_no: string;
  currency: string;
  amount: string;
}

export interface BatchSpec<O extends OrderFields> {
  name: SignedOperation;
  path: string;
  /** capture_orders, review_orders, ... */
  arrayField: string;
  limit: number;
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
  apply(order: O, tx: Transaction, request: OperationRequest, deps: Deps): Refusal | { status?: string; fields?: Record<string, string> };
}

const IDENTITY = ["amount", "currency", "order_no", "transaction_id"] as const;

export function batchOperation<O extends OrderFields>(spec: BatchSpec<O>): Operation {
  return {
    name: spec.name,
    path: spec.path,
    format: "json",
    handle(request, deps) {
      const orders = readOrders(request.body, spec.arrayField, spec.limit);
      const results = orders.map((raw) => runOrder(spec, raw, request, deps));
      const failed = results.filter((r) => r[spec.statusField] === codes.batch_status.failed).length;
      return {
        json: {
          merchant_id: request.caller.merchant.merchant_id,
          account_id: request.caller.account.account_id,
          encryption_data: "",
          return_status: codes.return_status.ok,
          return_message: codes.return_status.ok_message,
          [spec.arrayField]: results,
        },
        changed: failed < results.length,
        result: `${results.length - failed} of ${results.length} orders succeeded`,
      };
    },
  };
}

function runOrder<O extends OrderFields>(spec: BatchSpec<O>, raw: unknown, request: OperationRequest, deps: Deps): Record<string, string> {
  const echoed = echo(spec, raw);
  const parsed = spec.order.safeParse(raw);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "order"} ${i.message}`).join("; ");
    return element(spec, echoed, codes.batch_status.failed, resultInfo("invalid_order", detail));
  }
  const order = parsed.data;
  const { merchant, account } = request.caller;
  const tx = findOrderTransaction(deps.store.data.transactions, merchant.merchant_id, account.account_id, order);
  const outcome = tx instanceof Refusal ? tx : spec.apply(order, tx, request, deps);
  if (outcome instanceof Refusal) return element(spec, echoed, codes.batch_status.failed, outcome.info);
  const message = spec.successMessage ? resultInfo(spec.successMessage) : "";
  return element(spec, { ...echoed, ...outcome.fields }, outcome.status ?? codes.batch_status.ok, message);
}

/** The result element: identity and echoed fields, status and message; keys in the seed's (alphabetical) order. */
function element<O extends OrderFields>(spec: BatchSpec<O>, fields: Record<string, string>, status: string, message: string): Record<string, string> {
  const all: Record<string, string> = { ...fields, [spec.statusField]: status, [spec.messageField]: message };
  return Object.fromEntries(Object.keys(all).sort().map((k) => [k, all[k]!]));
}

function echo<O extends OrderFields>(spec: BatchSpec<O>, raw: unknown): Record<string, string> {
  const source = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  return Object.fromEntries([...IDENTITY, ...spec.echo].map((f) => [f, text(source[f])]));
}

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
