// One element of the transaction query's `orders_list`, in the interface document's field order ("Transaction
// query result"). Every value is a string, nested values are objects and an array, and an element
// for a selected order that was not found has exactly the same shape, with empty strings.
import { codes } from "../domain/codes.js";
import { compactDate, spacedDate } from "../domain/dates.js";
import { deductionPeriod } from "../domain/payment.js";
import { deliveryOf } from "../domain/delivery.js";
import type { DeliveryInformation, Subscription, Transaction } from "../domain/types.js";
import type { Repository } from "../domain/records.js";

interface FraudCheck {
  check_items: string;
  status: string;
}

export interface SubscriptionResult {
  contract_name: string;
  recurring_deduction_period: string;
  recurring_deduction_time: string;
  recurring_id: string;
  recurring_status: string;
}

export interface QueryElement {
  amount: string;
  currency: string;
  order_no: string;
  transaction_id: string;
  reference_no: string;
  /** the interface document prints it `the service`; docs/operations.md: the real gateway's key is `website` */
  website: string;
  delivery_information: DeliveryInformation;
  antifraud_provider: string;
  fraud_check_result: FraudCheck[];
  is3ds: string;
  payment_status: string;
  query_result: string;
  shopper_email: string;
  shopper_phone: string;
  subscription_result: SubscriptionResult;
  transaction_date: string;
}

/** A payment without a subscription still has the object, with empty strings, so the element's shape never varies. */
const NO_SUBSCRIPTION: SubscriptionResult = {
  contract_name: "",
  recurring_deduction_period: "",
  recurring_deduction_time: "",
  recurring_id: "",
  recurring_status: "",
};

/** The element for a transaction as it is now. */
export function foundElement(tx: Transaction, records: Pick<Repository, "subscription">): QueryElement {
  const found = tx.recurring_id ? records.subscription(tx.recurring_id) : undefined;
  const sub = found?.merchant_id === tx.merchant_id ? found : undefined;
  return {
    amount: tx.amount,
    currency: tx.currency,
    order_no: tx.order_no,
    transaction_id: tx.transaction_id,
    reference_no: tx.reference_no,
    website: tx.website,
    delivery_information: deliveryOf(tx.delivery),
    antifraud_provider: tx.antifraud_provider,
    // REVIEW stays REVIEW: the interface document lists ACCEPT and REJECT as values seen, not as the only ones,
    // and a check that held the payment for review neither accepted nor rejected it. Reporting it
    // as either would contradict payment_status 2100 and the risk_reasons of the payment's result.
    fraud_check_result: tx.risk_reasons.map((r) => ({ check_items: r.name, status: r.status })),
    is3ds: tx.is3ds ? "1" : "0",
    payment_status: codes.payment_status[tx.state],
    query_result: codes.query_result.found,
    shopper_email: tx.shopper_email,
    shopper_phone: tx.shopper_phone,
    subscription_result: sub ? subscriptionResult(sub) : { ...NO_SUBSCRIPTION, recurring_id: tx.recurring_id },
    transaction_date: compactDate(tx.created_at),
  };
}

/** The element for a selected order_no or transaction_id that matched no transaction of the account. */
export function missingElement(selector: { field: "order_no" | "transaction_id"; value: string }): QueryElement {
  return {
    amount: "",
    currency: "",
    order_no: "",
    transaction_id: "",
    reference_no: "",
    website: "",
    delivery_information: deliveryOf(undefined),
    antifraud_provider: "",
    fraud_check_result: [],
    is3ds: "",
    payment_status: "",
    query_result: codes.query_result.not_found,
    shopper_email: "",
    shopper_phone: "",
    subscription_result: { ...NO_SUBSCRIPTION },
    transaction_date: "",
    [selector.field]: selector.value,
  };
}

export function subscriptionResult(sub: Subscription): SubscriptionResult {
  // a cancelled or finished subscription has no next deduction: its time is empty
  const due = sub.state === "active" || sub.state === "suspended";
  return {
    contract_name: sub.contract_name,
    recurring_deduction_period: deductionPeriod(sub),
    recurring_deduction_time: due ? spacedDate(sub.next_deduction_at) : "",
    recurring_id: sub.recurring_id,
    recurring_status: codes.recurring_status[sub.state],
  };
}
