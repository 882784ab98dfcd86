// The operator API (/__sandbox) as typed calls, for a merchant's tests: against the Sandgate they
// started in-process (`sandbox.admin`) or a remote one (`createAdminClient(url, token)`). Every call
// is one HTTP request; an error answer throws SandgateAdminError with the API's status and message.
import type { z } from "zod";
import { callPath, operatorCall, type OperatorCallId, type OperatorEntry, type ParamNames } from "./operator-calls.js";
import type { ReceiverCheckReport } from "../receiver-check/run.js";
import type { RequestFilter, RequestLogEntry } from "../store/request-log.js";
import type { CoverageReport } from "../scenarios/coverage.js";
import type { Notification, Refund, Subscription, Transaction } from "../domain/types.js";

export class SandgateAdminError extends Error {
  override name = "SandgateAdminError";
  constructor(
    readonly status: number,
    /** the API's error code, e.g. "transaction_not_found" */
    readonly error: string,
    message: string,
  ) {
    super(`${status} ${error}: ${message}`);
  }
}

/** The scenarios, the global one and the bindings (GET /__sandbox/scenarios). */
export type ScenarioList = CallAnswer<"listScenarios">;

/** A payment as its payer's return and the merchant's query see it after a forced completion. */
export type CompletedPayment = CallAnswer<"completePayment">;

/** What a receiver check is asked to do (POST /__sandbox/receiver-checks). */
export interface ReceiverCheckInput {
  /** the merchant's notify_url (http or https, not this Sandgate): the only address contacted */
  url: string;
  /** a merchant of the fixtures, or one already provisioned */
  merchant_id: string;
  /** a payment of the merchant to notify about; by default the check makes one */
  transaction_id?: string;
  /** the key the probes are signed with (the receiver's); by default the merchant's key in Sandgate */
  key?: string;
}

/** An operator call of the table (api/operator-calls.ts), by its operationId. */
type CallOf<Id extends OperatorCallId> = Extract<OperatorEntry, { operationId: Id }>;

/** What call() sends: the path's parameters, the query, the JSON body. */
interface CallInput<Id extends OperatorCallId = OperatorCallId> {
  params?: Partial<Record<ParamNames<CallOf<Id>["path"]>, string>>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
}

/** What a call answers, as the table's answer schema has it. */
export type CallAnswer<Id extends OperatorCallId> = z.output<CallOf<Id>["answer"]>;

export interface AdminClient {
  readonly url: string;
  /**
   * Any operator call of the table by its operationId (GET /__sandbox/openapi.json lists them), e.g.
   * call("getNotification", { params: { id } }): a call the methods below do not name is reachable too.
   */
  call<Id extends OperatorCallId>(id: Id, input?: CallInput<Id>): Promise<CallAnswer<Id>>;
  health(): Promise<CallAnswer<"getHealth">>;
  /** the global scenario, for every merchant without a binding */
  setScenario(name: string): Promise<CallAnswer<"setGlobalScenario">>;
  /** one merchant's scenario (a CI job isolates itself by merchant_id) */
  bindScenario(merchantId: string, name: string): Promise<CallAnswer<"bindScenario">>;
  unbindScenario(merchantId: string): Promise<CallAnswer<"unbindScenario">>;
  scenarios(): Promise<ScenarioList>;
  /** back to the fixtures: everything, or one merchant's records */
  reset(merchantId?: string): Promise<CallAnswer<"resetState">>;
  requests(filter?: RequestFilter): Promise<RequestLogEntry[]>;
  /** the same requests as a HAR 1.2 document */
  requestsHar(filter?: RequestFilter): Promise<unknown>;
  transactions(filter?: { merchant_id?: string; order_no?: string }): Promise<Transaction[]>;
  refunds(filter?: { merchant_id?: string; transaction_id?: string }): Promise<Refund[]>;
  payouts(filter?: { merchant_id?: string; status?: string; request_id?: string }): Promise<Record<string, unknown>[]>;
  subscriptions(filter?: { merchant_id?: string; recurring_id?: string }): Promise<(Subscription & { recurring_status: string })[]>;
  /** `check`: one receiver check's notifications (its report's `check`) */
  notifications(filter?: { merchant_id?: string; event?: string; state?: string; check?: string }): Promise<Notification[]>;
  /** finishes a payment waiting for its payer as the payer would (paid, failed, threeds_passed, ...) */
  completePayment(transactionId: string, outcome: string): Promise<CompletedPayment>;
  /** settles an accepted refund now */
  settleRefund(refundReferenceId: string, result?: "processed" | "failed"): Promise<Refund>;
  completePayout(transactionId: string): Promise<Record<string, unknown>>;
  failPayout(transactionId: string, failure?: { failure_type?: string; failure_reason?: string }): Promise<Record<string, unknown>>;
  chargeSubscription(recurringId: string): Promise<Subscription & { recurring_status: string }>;
  /** a merchant and its secret key, provisioned now if Sandgate does not know it (--merchant-keys random: its key is random) */
  merchant(merchantId: string): Promise<MerchantView>;
  /** moves the sandbox clock forward ("90s", "2h", "3d", "1w", or seconds) and applies what fell due */
  /** `merchant`: that merchant's clock only */
  advanceClock(by: string | number, options?: { merchant?: string }): Promise<CallAnswer<"advanceClock">>;
  /** sets the clock to a later moment ("2027-01-01T00:00:00Z"); a moment before its time is refused (clock_backwards) and changes nothing */
  setClock(to: string, options?: { merchant?: string }): Promise<CallAnswer<"setClock">>;
  /** time stands still for the clock (the sandbox's, or `merchant`'s) until unfreezeClock; an advance or a set still moves it */
  freezeClock(options?: { merchant?: string }): Promise<CallAnswer<"freezeClock">>;
  unfreezeClock(options?: { merchant?: string }): Promise<CallAnswer<"unfreezeClock">>;
  /** the sandbox's clock, or `merchant`'s own */
  clock(options?: { merchant?: string }): Promise<CallAnswer<"getClock">>;
  /** attempts every notification due now */
  deliverNotifications(): Promise<CallAnswer<"deliverNotifications">>;
  resendNotification(notificationId: string): Promise<Notification>;
  /** `scope`: the rules of some operations only (a list, or "used": those its requests used), of one scenario only */
  coverage(merchantId?: string, scope?: { operations?: readonly string[] | "used"; scenario?: string }): Promise<CoverageReport>;
  clearCoverage(merchantId?: string): Promise<void>;
  /**
   * Checks a merchant's notification receiver: genuine, duplicate, forged, tampered, stale,
   * out-of-order and malformed notifications sent to `url`, one at a time, each judged. Resolves
   * with the report whatever the verdicts (see `passed`); bad input throws SandgateAdminError (400).
   */
  checkReceiver(input: ReceiverCheckInput): Promise<ReceiverCheckReport>;
  /** the state as a file to move or keep (NDJSON, docs/state.md): every merchant's, or one merchant's */
  exportState(merchantId?: string): Promise<string>;
  /** replaces the state with such a file (all of it, or the one merchant it holds); a refused file changes nothing */
  /** `all`: needed for a file of every merchant (it replaces every merchant's records and the clock) */
  importState(file: string, options?: { all?: boolean }): Promise<CallAnswer<"importState">>;
}

type Query = Record<string, string | number | undefined>;

/** a clock call's body field: one merchant's clock, or (none) the sandbox's */
const whose = (options: { merchant?: string }) => (options.merchant ? { merchant_id: options.merchant } : {});

/** A merchant as the operator API shows it. */
type MerchantView = CallAnswer<"provisionMerchant">["merchant"];

export interface AdminClientOptions {
  /** abandon a call that has no complete answer after this long (a TimeoutError); default: wait */
  timeoutMs?: number;
  /** how a call goes over HTTP (default: fetch); sandgate ctl passes node:http's, ~130 ms less to start than fetch's undici */
  transport?: Transport;
}

/** One HTTP exchange: the request as the client makes it, the answer's status, type and text. A timeout rejects with a TimeoutError. */
export type Transport = (
  url: string,
  request: { method: string; headers: Record<string, string>; body?: string; timeoutMs?: number },
) => Promise<{ status: number; contentType: string; text: string }>;

const fetchTransport: Transport = async (url, { method, headers, body, timeoutMs }) => {
  const res = await fetch(url, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
    ...(timeoutMs !== undefined ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
  });
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", text: await res.text() };
};

export function createAdminClient(url: string, token?: string, options: AdminClientOptions = {}): AdminClient {
  const base = url.replace(/\/+$/, "");
  const { timeoutMs, transport = fetchTransport } = options;
  /** One call of the table: its method and path, the parameters put in, the answer parsed (an error answer throws). */
  async function send<T>(operationId: OperatorCallId, input: CallInput = {}): Promise<T> {
    const spec = operatorCall(operationId);
    const path = callPath(operationId, (input.params ?? {}) as Record<string, string>);
    const method = spec.method.toUpperCase();
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(input.query ?? {})) if (v !== undefined && v !== "") query.set(k, String(v));
    const headers: Record<string, string> = { accept: "application/json" };
    if (token) headers.authorization = `Bearer ${token}`;
    // a call that reads its own body (a state file) takes text as it is; every other body is JSON
    const asText = spec.body === "raw" && typeof input.body === "string";
    if (input.body !== undefined) headers["content-type"] = asText ? "application/x-ndjson" : "application/json";
    const res = await transport(`${base}${path}${query.size ? `?${query}` : ""}`, {
      method,
      headers,
      ...(input.body !== undefined ? { body: asText ? (input.body as string) : JSON.stringify(input.body) } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
    const { text } = res;
    const ok = res.status >= 200 && res.status < 300;
    // an answer in another format (a state file, coverage as Markdown) is its text
    if (ok && !/^application\/json\b/.test(res.contentType)) return text as T;
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new SandgateAdminError(res.status, "not_json", `${method} ${path} answered ${text.slice(0, 200)}`);
    }
    if (!ok) {
      const p = (parsed ?? {}) as { error?: string; message?: string };
      throw new SandgateAdminError(res.status, p.error ?? "error", p.message ?? text.slice(0, 200));
    }
    return parsed as T;
  }
  return {
    url,
    call: (id, input) => send(id, input as CallInput),
    health: () => send("getHealth"),
    setScenario: (name) => send("setGlobalScenario", { body: { name } }),
    bindScenario: (merchantId, name) => send("bindScenario", { params: { merchantId }, body: { name } }),
    unbindScenario: (merchantId) => send("unbindScenario", { params: { merchantId } }),
    scenarios: () => send("listScenarios"),
    reset: (merchantId) => send("resetState", { body: merchantId === undefined ? { all: true } : { merchant_id: merchantId } }),
    requests: async (filter = {}) => (await send<{ requests: RequestLogEntry[] }>("listRequests", { query: filter as Query })).requests,
    requestsHar: (filter = {}) => send("exportRequestsHar", { query: filter as Query }),
    transactions: async (filter = {}) => (await send<{ transactions: Transaction[] }>("listTransactions", { query: filter })).transactions,
    refunds: async (filter = {}) => (await send<{ refunds: Refund[] }>("listRefunds", { query: filter })).refunds,
    payouts: async (filter = {}) => (await send<{ payouts: Record<string, unknown>[] }>("listPayouts", { query: filter })).payouts,
    subscriptions: async (filter = {}) =>
      (await send<{ subscriptions: (Subscription & { recurring_status: string })[] }>("listSubscriptions", { query: filter })).subscriptions,
    notifications: async (filter = {}) => (await send<{ notifications: Notification[] }>("listNotifications", { query: filter })).notifications,
    completePayment: (transactionId, outcome) => send("completePayment", { params: { transaction_id: transactionId }, body: { outcome } }),
    settleRefund: async (ref, result = "processed") => (await send<{ refund: Refund }>("settleRefund", { params: { ref }, body: { result } })).refund,
    completePayout: async (transactionId) =>
      (await send<{ payout: Record<string, unknown> }>("completePayout", { params: { transaction_id: transactionId }, body: {} })).payout,
    failPayout: async (transactionId, failure = {}) =>
      (await send<{ payout: Record<string, unknown> }>("failPayout", { params: { transaction_id: transactionId }, body: failure })).payout,
    merchant: async (merchantId) => (await send<{ merchant: MerchantView }>("provisionMerchant", { params: { merchant_id: merchantId } })).merchant,
    chargeSubscription: async (recurringId) =>
      (await send<{ subscription: Subscription & { recurring_status: string } }>("chargeSubscription", { params: { recurring_id: recurringId }, body: {} }))
        .subscription,
    advanceClock: (by, options = {}) =>
      send("advanceClock", {
        body: { ...(typeof by === "number" ? { advance_seconds: by } : { advance: by }), ...whose(options) },
      }),
    setClock: (to, options = {}) => send("setClock", { body: { to, ...whose(options) } }),
    freezeClock: (options = {}) => send("freezeClock", { body: whose(options) }),
    unfreezeClock: (options = {}) => send("unfreezeClock", { body: whose(options) }),
    clock: (options = {}) => send("getClock", options.merchant ? { query: { merchant_id: options.merchant } } : {}),
    deliverNotifications: () => send("deliverNotifications", { body: {} }),
    resendNotification: async (notificationId) =>
      (await send<{ notification: Notification }>("resendNotification", { params: { id: notificationId }, body: {} })).notification,
    coverage: (merchantId, scope = {}) =>
      send("getCoverage", {
        query: {
          merchant_id: merchantId,
          operations: typeof scope.operations === "string" ? scope.operations : scope.operations?.join(","),
          scenario: scope.scenario,
        },
      }),
    clearCoverage: async (merchantId) => {
      await send("clearCoverage", { query: { merchant_id: merchantId } });
    },
    checkReceiver: ({ url, merchant_id, transaction_id, key }) => send("checkReceiver", { body: { url, merchant_id, transaction_id, key } }),
    exportState: (merchantId) => send("exportState", { query: { merchant_id: merchantId } }),
    importState: (file, options = {}) => send("importState", { body: file, query: { all: options.all ? "true" : undefined } }),
  };
}
