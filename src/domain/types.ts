// The shape of Sandgate's state: what fixtures seed and what lowdb persists.
import type { PaymentState, RecurringState } from "./codes.js";
import type { RiskReason } from "./outcomes.js";
import type { Counters } from "./ids.js";
import type { PayoutFields } from "./payout-fields.js";

type CaptureMode = "manual" | "auto";

export interface Account {
  account_id: string;
  /** The gateway-side account of the payment channel, shown as account_id in the checkout page. */
  gateway_account: string;
  account_name: string;
  connector: string;
  connector_code: string;
  descriptor: string;
  /** manual: an approved payment is authorised (2000) until captured; auto: it is paid (3000) at once. */
  capture_mode: CaptureMode;
  payment_methods: string[];
}

export interface Merchant {
  merchant_id: string;
  name: string;
  secret_key: string;
  /** Addresses allowed to call the query operations; "*" allows any. */
  registered_ips: string[];
  accounts: Account[];
  provisioned?: boolean;
  /** how far this merchant's own clock runs ahead of the sandbox's (ctl clock advance --merchant); none: 0 */
  clock_offset_ms?: number;
  /** while set, this merchant's clock stands still at this moment, ms since the epoch (ctl clock freeze --merchant) */
  clock_frozen_at_ms?: number;
}

export interface CardToken {
  token_id: string;
  merchant_id: string;
  /** first six and last four, a star per hidden digit: the full number is never kept (domain/card-on-file.ts) */
  card_masked: string;
  /** a keyed hash of the number, only when a scenario rule or fixture names it: rules compare their numbers with it */
  card_fingerprint?: string;
  expiration_month: string;
  expiration_year: string;
  holder_name: string;
  created_at: string;
}

export interface DeliveryInformation {
  delivery_address: string;
  delivery_city: string;
  delivery_country: string;
  delivery_firstname: string;
  delivery_lastname: string;
  delivery_postal_code: string;
  delivery_state: string;
}

export type PaymentKind = "direct" | "apm" | "checkout" | "recurring";

export interface Transaction {
  transaction_id: string;
  merchant_id: string;
  account_id: string;
  order_no: string;
  kind: PaymentKind;
  currency: string;
  /** decimal string with two places */
  amount: string;
  state: PaymentState;
  /** result key in codes.json (success, do_not_honor, pending_3ds, ...) */
  result: string;
  reference_no: string;
  website: string;
  card_masked: string;
  token_id: string;
  payment_method: string;
  connector: string;
  note: string;
  shopper_email: string;
  shopper_phone: string;
  delivery: DeliveryInformation;
  is3ds: boolean;
  threeds_result: string;
  risk_action: "ACCEPT" | "REVIEW" | "REJECT";
  risk_score: number;
  risk_reasons: RiskReason[];
  antifraud_provider: string;
  notify_url: string;
  return_url: string;
  /** Id of the payer-facing page (APM, 3-D Secure challenge, hosted checkout), when there is one. */
  page_id: string;
  recurring_id: string;
  captured_amount: string;
  refunded_amount: string;
  created_at: string;
  updated_at: string;
  /** what a payer page still needs from the request, while the payment waits for the payer */
  payer_request?: PayerRequest | undefined;
  /** every request and state change that touched it, oldest first (at most HISTORY_LIMIT) */
  history?: HistoryEntry[];
}

/** The part of a payment request that the payer's page acts on later. */
/** A subscription as a payment request asks for it (the `subscription` object). */
export interface SubscriptionTerms {
  contract?: string | undefined;
  contract_name?: string | undefined;
  contract_amount?: string | undefined;
  interval?: string | undefined;
  interval_count?: string | undefined;
  billing_cycle?: number | undefined;
  promotion_cycle?: number | undefined;
  contract_start?: string | undefined;
  contract_end?: string | undefined;
  price_id?: string | undefined;
}

export interface PayerRequest {
  /** the request's top-level text fields (scenario rules match them when the payer pays by card) */
  fields: Record<string, string>;
  /** the interface document's encoded item list, shown at the hosted checkout */
  items: string;
  /** subscription terms: the subscription starts when the payment succeeds */
  subscription?: SubscriptionTerms;
  /** the card kept on file for the subscription's deductions (a direct payment's challenge) */
  card_token?: string;
  /** the scenario the request chose with X-Sandbox-Scenario: it also decides the payer's card */
  scenario?: string;
  /** the outcome the request named with X-Sandbox-Outcome: the payer's card ends with it (stronger than any scenario) */
  outcome?: string;
}

/** One line of a transaction's history. */
export interface HistoryEntry {
  at: string;
  /** what happened: "created", "capture", "refund … accepted", "payer: paid", ... */
  event: string;
  /** payment_status after it */
  payment_status: string;
  /** `<code>:<text>` of the step */
  result: string;
  /** the scenario rule (or tester/operator choice) that decided it */
  rule: string;
  /** who made it happen */
  source: HistorySource;
  /** the request log id, when a gateway request did it */
  request_id?: string | undefined;
}

export interface Subscription {
  recurring_id: string;
  merchant_id: string;
  account_id: string;
  order_no: string;
  transaction_id: string;
  token_id: string;
  contract: string;
  contract_name: string;
  contract_amount: string;
  currency: string;
  interval: string;
  interval_count: number;
  billing_cycle: number;
  promotion_cycle: number;
  contract_start: string;
  contract_end: string;
  price_id: string;
  state: RecurringState;
  deductions: number;
  next_deduction_at: string;
  created_at: string;
}

export interface Refund {
  refund_reference_id: string;
  refund_reference: string;
  transaction_id: string;
  merchant_id: string;
  account_id: string;
  order_no: string;
  currency: string;
  amount: string;
  refund_amount: string;
  refund_reason: string;
  state: "accepted" | "processed" | "failed";
  refund_date: string;
  refund_processing_date: string;
  /** when an accepted refund settles, and how (set by scenario or operator) */
  due_at: string;
  fate: "processed" | "failed";
  /** notification behaviour the deciding scenario rule asked for (delay, duplicate, drop) */
  notify?: { delay_seconds?: number; duplicate?: number; drop?: boolean };
}

/**
 * The format of a state as --data keeps it (its snapshot's `version`, its journal's first line): 1
 * is every format before versions were written (read and brought up to date on start, see
 * store/state-formats.ts); 2 the first versioned one; 3 today's (its journal writes a merchant
 * changed in place as what changed, its accounts as the ones added).
 */
export const STATE_VERSION = 3;

/**
 * Who made a change: a merchant's server (api), the dashboard's merchant portal (portal) or
 * playground (playground), the payer at a payer page, the operator API, or the clock.
 */
type HistorySource = RequestSource | "payer" | "operator" | "clock";
/** Where a gateway request came from: a merchant's server, or the dashboard acting as one. */
export type RequestSource = "api" | "portal" | "playground";

export interface State {
  version: number;
  seed: string;
  counters: Counters;
  merchants: Merchant[];
  tokens: CardToken[];
  transactions: Transaction[];
  subscriptions: Subscription[];
  refunds: Refund[];
  /** the notification outbox: every notification with every delivery attempt */
  notifications: Notification[];
  payouts: Payout[];
}

export type PayoutStatus = "PENDING" | "COMPLETED" | "FAILED";

export interface Payout {
  transaction_id: string;
  merchant_id: string;
  account_id: string;
  request_id: string;
  /** the request as sent: every field of the interface document (bank_code too), values as text; echoed in every response */
  request: PayoutFields;
  amount_beneficiary_receives: number;
  amount_payer_pays: number;
  fee_amount: number;
  fee_currency: string;
  payer_id: string;
  short_reference_id: string;
  local_clearing_system: string;
  status: PayoutStatus;
  failure_type: string;
  failure_reason: string;
  /** PENDING: when it moves on by itself ("" = only by operator call), to what, and with which failure */
  due_at: string;
  next_status: "" | "COMPLETED" | "FAILED";
  next_failure_type: string;
  next_failure_reason: string;
  /** the scenario rule that decided it */
  rule: string;
  /** notification behaviour the deciding rule asked for, kept for the later status changes too */
  notify?: { delay_seconds?: number; duplicate?: number; drop?: boolean };
  created_at: string;
  last_updated_at: string;
}

/** What a notification's POST carries (the exact JSON body sent). */
export interface NotificationBody {
  notification_id: string;
  event: string;
  merchant_id: string;
  created_at: string;
  /** when this attempt was sent (signed): set per attempt, so a receiver's freshness window holds retries too */
  sent_at?: string;
  data: Record<string, unknown>;
  encryption_data: string;
}

/** What one attempt came to, before it is recorded (notify/outbox.ts recordAttempt). */
export interface AttemptOutcome {
  http_status: number | null;
  error: string;
  duration_ms: number;
  response_body: string;
  /** false when retrying cannot help (the URL is refused) */
  retryable: boolean;
  /** without an answer: the failure's system code (ECONNREFUSED, ENOTFOUND, …) or "timeout" */
  code?: string | undefined;
}

export interface NotificationAttempt {
  /** 1-based over every delivery of this notification; sent as X-Sandbox-Attempt */
  attempt: number;
  at: string;
  /** first delivery, a retry after a failure, a scenario duplicate, or an operator resend */
  reason: "first" | "retry" | "duplicate" | "resend";
  /** null when no HTTP answer came (refused, connection failed, timed out) */
  http_status: number | null;
  /** empty when the receiver answered 2xx */
  error: string;
  duration_ms: number;
  /** the start of the receiver's answer (at most 500 characters) */
  response_body: string;
  /** "listen": handed to `sandgate listen`, which delivered it to its local receiver and reported the answer */
  via?: "listen";
}

export interface Notification {
  notification_id: string;
  merchant_id: string;
  url: string;
  event: string;
  payload: NotificationBody;
  created_at: string;
  /** when the next attempt is due; empty when nothing more will be sent */
  due_at: string;
  /** delivered: every copy got a 2xx; failed: gave up (schedule exhausted or refused); dropped: never sent (scenario) */
  state: "pending" | "delivered" | "failed" | "dropped";
  attempts: NotificationAttempt[];
  /** scenario behaviour asked for when it was emitted */
  behaviour: { delay_seconds: number; duplicate: number; drop: boolean };
  /** successful deliveries still owed: 1 + duplicate, less those done */
  deliveries_left: number;
  /** scheduled attempts failed in a row since the last success: picks the next backoff delay */
  failures: number;
  /** why it failed or was dropped; empty otherwise */
  error: string;
  /** with a shared store, while one replica sends it: which one, and until when (real time) the others leave it alone */
  claim?: { by: string; until: string };
  /** sent by a receiver check (`sandgate check-receiver`): the check's id (chk_…), never retried */
  check?: string;
  /** with `check`: the probe it was sent for (valid, tampered_amount, malformed_json, …) */
  probe?: string;
  /** what was sent instead of the payload as JSON (a check's malformed, empty or mistyped body) */
  raw?: { content_type: string; body: string };
}

/** The record collections of the state. */
export type Collection = "merchants" | "transactions" | "refunds" | "tokens" | "payouts" | "subscriptions" | "notifications";

/** The key that names a record of each collection. */
export const KEY_FIELD = {
  merchants: "merchant_id",
  transactions: "transaction_id",
  refunds: "refund_reference_id",
  tokens: "token_id",
  payouts: "transaction_id",
  subscriptions: "recurring_id",
  notifications: "notification_id",
} as const satisfies Record<Collection, string>;
