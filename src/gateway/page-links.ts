// The payer-facing pages a payment can send its payer to: their addresses, and the payment that
// waits on one (an APM payment, a hosted checkout) until its payer finishes it there.
import { isNoRule } from "../base/words.js";
import type { PaymentOutcome } from "../domain/outcomes.js";
import { createTransaction } from "../domain/payment.js";
import type { Transaction } from "../domain/types.js";
import type { Deps } from "../deps/deps.js";
import type { OperationRequest } from "../http/operation.js";

export type PageKind = "apm" | "3ds" | "checkout";

export const pageUrl = (baseUrl: string, kind: PageKind, pageId: string) => `${baseUrl.replace(/\/$/, "")}/pay/${kind}/${pageId}`;

/**
 * A new payment whose payer finishes it on its page (not yet stored): its page id, and the rule
 * named in its history (the deciding rule, or `builtinRule` when none decided).
 */
export function paymentOnPage(
  kind: "apm" | "checkout",
  { requestId, caller, now, decision, via }: OperationRequest,
  fields: Record<string, string>,
  outcome: PaymentOutcome,
  builtinRule: string,
  deps: Deps,
): { tx: Transaction; pageId: string; rule: string } {
  const pageId = deps.store.ids.hex("page", 24);
  const rule = isNoRule(decision.rule) ? builtinRule : decision.rule;
  const payment = { kind, merchantId: caller.merchant.merchant_id, account: caller.account, fields, outcome, cardMasked: "", tokenId: "" };
  const tx = createTransaction({ ...payment, pageId, now, rule, requestId, source: via }, deps.store.ids);
  return { tx, pageId, rule };
}
