// The operator API (/__sandbox) as typed calls, for a merchant's tests: against the Sandgate they
// started in-process (`sandbox.admin`) or a remote one (`createAdminClient(url, token)`). Every call
// is one HTTP request; an error answer throws SandgateAdminError with the API's status and message.
import type { ReceiverCheckReport } from "./receiver-check/run.js";
import type { RequestFilter, RequestLogEntry } from "./request-log.js";
import type { CoverageReport } from "./scenarios/coverage.js";
import type { Notification, Refund, Subscription, Transaction } from "./domain/types.js";

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

export interface ScenarioList {
  global: string;
  bindings: Record<string, string>;
  scenarios: { name: string; description: string; extends: string[]; rules: number }[];
  errors: string[];
}

/** A payment as its payer's return and the merchant's query see it after a forced completion. */
export interface CompletedPayment {
  transaction_id: string;
  order_status: string;
  result_info: string;
  payment_status: string;
  /** the page it now waits at ("3ds" after a checkout chose 3-D Secure), or "" once finished */
  stage: string;
  /** the merchant's return_url with the signed result, or "" */
  return_url: string;
}

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

export interface AdminClient {
  readonly url: string;
  health(): Promise<{ status: string; scenario: string; signature_mode: string; time: string }>;
  /** the global scenario, for every merchant without a binding */
  setScenario(name: string): Promise<{ global: string }>;
  /** one merchant's scenario (a CI job isolates itself by merchant_id) */
  bindScenario(merchantId: string, name: string): Promise<{ merchant_id: string; scenario: string }>;
  unbindScenario(merchantId: string): Promise<{ merchant_id: string; scenario: string }>;
  scenarios(): Promise<ScenarioList>;
  /** back to the fixtures: everything, or one merchant's records */
  reset(merchantId?: string): Promise<{ reset: string }>;
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
  advanceClock(by: string | number): Promise<{ now: string; offset_ms: number; applied: number }>;
  clock(): Promise<{ now: string; offset_ms: number }>;
  /** attempts every notification due now */
  deliverNotifications(): Promise<{ attempts: number; pending: number; delivered: number; failed: number; dropped: number }>;
  resendNotification(notificationId: string): Promise<Notification>;
  coverage(merchantId?: string): Promise<CoverageReport>;
  clearCoverage(merchantId?: string): Promise<void>;
  /**
   * Checks a merchant's notification receiver: genuine, duplicate, forged, tampered, stale,
   * out-of-order and malformed notifications sent to `url`, one at a time, each judged. Resolves
   * with the report whatever the verdicts (see `passed`); bad input throws SandgateAdminError (400).
   */
  checkReceiver(input: ReceiverCheckInput): Promise<ReceiverCheckReport>;
}

type Query = Record<string, string | number | undefined>;

/** A merchant as the operator API shows it. */
export interface MerchantView {
  merchant_id: string;
  name: string;
  secret_key: string;
  provisioned: boolean;
  accounts: { account_id: string; capture_mode: "manual" | "auto" }[];
}

export interface AdminClientOptions {
  /** abandon a call that has no complete answer after this long (a TimeoutError); default: wait */
  timeoutMs?: number;
}

export function createAdminClient(url: string, token?: string, options: AdminClientOptions = {}): AdminClient {
  const base = `${url.replace(/\/+$/, "")}/__sandbox`;
  const { timeoutMs } = options;
  async function call<T>(method: string, path: string, options: { query?: Query; body?: unknown } = {}): Promise<T> {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined && v !== "") query.set(k, String(v));
    const headers: Record<string, string> = { accept: "application/json" };
    if (token) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${base}${path}${query.size ? `?${query}` : ""}`, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      ...(timeoutMs !== undefined ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new SandgateAdminError(res.status, "not_json", `${method} ${path} answered ${text.slice(0, 200)}`);
    }
    if (!res.ok) {
      const p = (parsed ?? {}) as { error?: string; message?: string };
      throw new SandgateAdminError(res.status, p.error ?? "error", p.message ?? text.slice(0, 200));
    }
    return parsed as T;
  }
  const id = encodeURIComponent;
  return {
    url,
    health: () => call("GET", "/health"),
    setScenario: (name) => call("PUT", "/scenarios/global", { body: { name } }),
    bindScenario: (merchantId, name) => call("PUT", `/scenarios/bindings/${id(merchantId)}`, { body: { name } }),
    unbindScenario: (merchantId) => call("DELETE", `/scenarios/bindings/${id(merchantId)}`),
    scenarios: () => call("GET", "/scenarios"),
    reset: (merchantId) => call("POST", "/reset", { body: merchantId === undefined ? { all: true } : { merchant_id: merchantId } }),
    requests: async (filter = {}) => (await call<{ requests: RequestLogEntry[] }>("GET", "/requests", { query: filter as Query })).requests,
    requestsHar: (filter = {}) => call("GET", "/requests.har", { query: filter as Query }),
    transactions: async (filter = {}) => (await call<{ transactions: Transaction[] }>("GET", "/transactions", { query: filter })).transactions,
    refunds: async (filter = {}) => (await call<{ refunds: Refund[] }>("GET", "/refunds", { query: filter })).refunds,
    payouts: async (filter = {}) => (await call<{ payouts: Record<string, unknown>[] }>("GET", "/payouts", { query: filter })).payouts,
    subscriptions: async (filter = {}) => (await call<{ subscriptions: (Subscription & { recurring_status: string })[] }>("GET", "/subscriptions", { query: filter })).subscriptions,
    notifications: async (filter = {}) => (await call<{ notifications: Notification[] }>("GET", "/notifications", { query: filter })).notifications,
    completePayment: (transactionId, outcome) => call("POST", `/payments/${id(transactionId)}/complete`, { body: { outcome } }),
    settleRefund: async (ref, result = "processed") => (await call<{ refund: Refund }>("POST", `/refunds/${id(ref)}/settle`, { body: { result } })).refund,
    completePayout: async (transactionId) => (await call<{ payout: Record<string, unknown> }>("POST", `/payouts/${id(transactionId)}/complete`, { body: {} })).payout,
    failPayout: async (transactionId, failure = {}) => (await call<{ payout: Record<string, unknown> }>("POST", `/payouts/${id(transactionId)}/fail`, { body: failure })).payout,
    merchant: async (merchantId) => (await call<{ merchant: MerchantView }>("PUT", `/merchants/${id(merchantId)}`)).merchant,
    chargeSubscription: async (recurringId) => (await call<{ subscription: Subscription & { recurring_status: string } }>("POST", `/subscriptions/${id(recurringId)}/charge`, { body: {} })).subscription,
    advanceClock: (by) => call("POST", "/clock", { body: typeof by === "number" ? { advance_seconds: by } : { advance: by } }),
    clock: () => call("GET", "/clock"),
    deliverNotifications: () => call("POST", "/notifications/deliver", { body: {} }),
    resendNotification: async (notificationId) => (await call<{ notification: Notification }>("POST", `/notifications/${id(notificationId)}/resend`, { body: {} })).notification,
    coverage: (merchantId) => call("GET", "/coverage", { query: { merchant_id: merchantId } }),
    clearCoverage: async (merchantId) => {
      await call("DELETE", "/coverage", { query: { merchant_id: merchantId } });
    },
    checkReceiver: ({ url, merchant_id, transaction_id, key }) => call("POST", "/receiver-checks", { body: { url, merchant_id, transaction_id, key } }),
  };
}
