// The payment a receiver check's notifications describe, made for it the way a merchant makes one:
// a signed direct authorise (card 4242…) sent to this Sandgate over HTTP, so it goes through the
// whole gateway path (signature, scenario, request log) like any other. It has no notify_url:
// Sandgate sends nothing of its own to the receiver while the check runs.
import type { Deps } from "../deps/deps.js";
import { signatureFields, signatureOf } from "../domain/signature.js";
import type { Merchant, Transaction } from "../domain/types.js";
import { CheckRefused } from "./input.js";
import { GATEWAY_OPERATIONS } from "../domain/gateway-operations.js";

const ANSWER_TIMEOUT_MS = 30_000;

export async function createPayment(deps: Deps, merchant: Merchant, sandgateUrl: string, checkId: string): Promise<Transaction> {
  const account = merchant.accounts[0]!;
  const orderNo = `CHECK-${checkId}`;
  const body: Record<string, string> = {
    merchant_id: merchant.merchant_id,
    account_id: account.account_id,
    order_no: orderNo,
    currency: "USD",
    amount: "10.00",
    card: "4242424242424242",
    expiration_month: "12",
    expiration_year: String(deps.store.records.nowOf(merchant.merchant_id, deps.clock.now()).getUTCFullYear() + 3),
    security_code: "123",
    first_name: "Receiver",
    last_name: "Check",
    shopper_email: "receiver-check@example.com",
  };
  body.encryption_data = signatureOf(signatureFields.authorise.request, body, merchant.secret_key);
  // the shipped default scenario approves this card whatever the merchant is bound to (a custom
  // scenario folder may lack it: then the scenario in force decides)
  const scenario: Record<string, string> = deps.scenarios.get("default") ? { "x-sandbox-scenario": "default" } : {};
  let answer = "";
  try {
    const res = await fetch(`${sandgateUrl}${GATEWAY_OPERATIONS.authorise.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/xml", ...scenario },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    });
    answer = `HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`;
  } catch (err) {
    answer = (err as Error).message;
  }
  const tx = await deps.store.unit((store) => store.records.transactionsByOrder(merchant.merchant_id, orderNo)[0], { merchant: merchant.merchant_id });
  if (!tx) throw new CheckRefused(500, "payment_not_created", `the check's payment could not be made (POST /v1/authorise: ${answer})`);
  return tx;
}
