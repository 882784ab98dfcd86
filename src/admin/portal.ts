// The merchant portal: what the gateway lets a merchant do by hand to one payment — capture (whole
// or part), cancel, refund (whole or part, with a reason), approve or reject a review — from the
// transaction's page on the dashboard, the operator API and `sandgate ctl payment …`. Each action is
// the merchant's own gateway request, a batch of one order signed with its key, handed to the
// gateway's core (runOperation) attributed "portal": the same transitions, amounts, scenario
// decision, notifications, coverage and request log as a request from the merchant's server, and
// when the gateway refuses, its own message.
import type { Deps } from "../deps/deps.js";
import { cancel } from "../gateway/cancel.js";
import { capture } from "../gateway/capture.js";
import { refund } from "../gateway/refund.js";
import { review } from "../gateway/review.js";
import type { BatchOperation } from "../gateway/batch.js";
import { runAsMerchant } from "../http/as-merchant.js";
import { fromCents, toCents } from "../domain/money.js";
import { transition, type Action } from "../domain/transitions.js";
import type { Transaction } from "../domain/types.js";
import type { Done } from "./actions.js";
import { PORTAL_CALLS, type PortalAction } from "../api/calls/portal-calls.js";

export { PORTAL_CALLS, type PortalAction };
/** the actions, in the order a page offers them */
export const PORTAL_ACTIONS = Object.keys(PORTAL_CALLS) as PortalAction[];

interface PortalInput {
  /** capture: what to capture (default: all of it); refund: what to refund (default: all that is left) */
  amount?: string | undefined;
  /** refund: its reason */
  reason?: string | undefined;
  /** review: approve or reject */
  decision?: "approve" | "reject" | undefined;
}

/** What the gateway answered for the order, and the payment as it is now. */
export interface PortalResult {
  action: PortalAction;
  /** the merchant's request the action was (X-Request-Id): the request log and the payment's history name it */
  request_id: string;
  result: Record<string, string>;
  transaction: Pick<Transaction, "transaction_id" | "merchant_id" | "order_no" | "state" | "amount" | "captured_amount" | "refunded_amount" | "currency">;
}

const OPERATIONS: Record<PortalAction, BatchOperation> = { capture, cancel, refund, review };

/** The transitions a portal action asks for (review: approve or reject). */
const ACTIONS: Record<PortalAction, Action[]> = { capture: ["capture"], cancel: ["cancel"], refund: ["refund"], review: ["approve", "reject"] };

/** The portal actions the transitions table allows a payment in its state (what its page offers). */
export const allowedActions = (tx: Transaction): PortalAction[] => PORTAL_ACTIONS.filter((a) => ACTIONS[a].some((step) => "to" in transition(tx.state, step)));

/** What is left to refund. */
export const refundable = (tx: Transaction) => fromCents(toCents(tx.captured_amount) - toCents(tx.refunded_amount));

/** The one order of the merchant's request. */
function orderOf(action: PortalAction, tx: Transaction, input: PortalInput): Record<string, string> {
  const identity = { transaction_id: tx.transaction_id, order_no: tx.order_no, currency: tx.currency, amount: tx.amount };
  switch (action) {
    case "capture":
      return { ...identity, amount: input.amount ?? tx.amount };
    case "cancel":
      return identity;
    case "refund":
      return { ...identity, refund_amount: input.amount ?? refundable(tx), refund_reason: input.reason ?? "" };
    case "review":
      return { ...identity, review_flag: input.decision ?? "" };
  }
}

const view = (tx: Transaction): PortalResult["transaction"] => ({
  transaction_id: tx.transaction_id,
  merchant_id: tx.merchant_id,
  order_no: tx.order_no,
  state: tx.state,
  amount: tx.amount,
  captured_amount: tx.captured_amount,
  refunded_amount: tx.refunded_amount,
  currency: tx.currency,
});

/**
 * Runs the action as the merchant's request. Opens its own short units (the gateway's core opens the
 * merchant's), so call it outside any unit.
 */
async function portalAction(deps: Deps, transactionId: string, action: PortalAction, input: PortalInput): Promise<Done<PortalResult>> {
  // with a shared store, the payment's merchant is looked up first, and only its records are read
  const merchantId = deps.store.kind === "redis" ? await deps.store.locate("transaction", transactionId) : undefined;
  const found =
    deps.store.kind === "redis" && merchantId === undefined
      ? undefined
      : await deps.store.unit(
          (unit) => {
            const tx = unit.records.transaction(transactionId);
            return tx ? { tx: structuredClone(tx), key: unit.records.merchant(tx.merchant_id)?.secret_key ?? "" } : undefined;
          },
          merchantId === undefined ? undefined : { merchant: merchantId },
        );
  if (!found) return { problem: { status: 404, error: "transaction_not_found", message: `no transaction ${transactionId}` } };
  const { tx, key } = found;
  const operation = OPERATIONS[action];
  const body: Record<string, unknown> = { merchant_id: tx.merchant_id, account_id: tx.account_id, [operation.orders.arrayField]: [orderOf(action, tx, input)] };
  const headers = { host: "localhost", "content-type": "application/json", "user-agent": "Sandgate merchant portal" };
  const answer = await runAsMerchant(operation, body, { key, headers, clientAddress: "127.0.0.1", via: "portal" }, deps);
  const json = JSON.parse(answer.body) as Record<string, unknown>;
  const request_id = answer.headers["X-Request-Id"] ?? "";
  const result = (json[operation.orders.arrayField] as Record<string, string>[] | undefined)?.[0];
  const refused = (status: number, message: string): Done<never> => ({ problem: { status, error: "refused", message, about: { request_id } } });
  if (!result) return refused(answer.status >= 500 ? answer.status : 409, String(json.return_message ?? `the gateway answered ${answer.status}`));
  if (result[operation.orders.statusField] === "0") return refused(409, result[operation.orders.messageField] ?? "");
  const now = await deps.store.unit((unit) => unit.records.transaction(transactionId), { merchant: tx.merchant_id });
  return { value: { action, request_id, result, transaction: view(now ?? tx) } };
}

/**
 * The portal's input from a JSON body or a dashboard form (empty fields left out), or what is wrong
 * with it: the gateway judges the amounts, but an amount that is not text is refused here rather
 * than read as "all of it".
 */
function portalInput(action: PortalAction, body: unknown): Done<PortalInput> {
  const b = (body ?? {}) as Record<string, unknown>;
  const wrong = ["amount", "reason", "decision"].filter((name) => b[name] !== undefined && typeof b[name] !== "string");
  if (wrong.length) return invalid(`${wrong.join(" and ")} must be text (e.g. "amount": "30.00")`);
  const textOf = (name: string) => ((b[name] as string | undefined)?.trim() ? (b[name] as string).trim() : undefined);
  const decision = textOf("decision");
  if (action === "review" && decision !== "approve" && decision !== "reject")
    return invalid(`decision must be "approve" or "reject", not ${JSON.stringify(decision ?? "")}`);
  return { value: { amount: textOf("amount"), reason: textOf("reason"), decision: decision as PortalInput["decision"] } };
}

const invalid = (message: string): Done<never> => ({ problem: { status: 400, error: "invalid_field", message } });

/** Runs a portal action on a checked input. */
export const runPortal = async (deps: Deps, id: string, action: PortalAction, body: unknown): Promise<Done<PortalResult>> => {
  const input = portalInput(action, body);
  return "problem" in input ? input : portalAction(deps, id, action, input.value);
};
