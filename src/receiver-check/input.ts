// What a receiver check is asked to do, and the input it refuses before it changes anything (no
// payment created, no notification recorded): a URL that is not http(s) or points back at this
// Sandgate (the dispatcher's own refusal, notify/target.ts), a merchant that does not exist (never
// provisioned by the check), a transaction that is unknown or another merchant's.
import type { Deps } from "../deps/deps.js";
import { targetCheck } from "../notify/target.js";
import type { Merchant, Transaction } from "../domain/types.js";

export interface CheckInput {
  /** the merchant's notify_url: the only address the check contacts */
  url: string;
  merchant_id: string;
  /** a payment of the merchant to describe; by default one is made for the check */
  transaction_id?: string | undefined;
  /** the key the probes are signed with (the receiver's); by default the merchant's key in Sandgate */
  key?: string | undefined;
}

/** A check that cannot run: bad input (400) or a payment that could not be made (500). */
export class CheckRefused extends Error {
  override name = "CheckRefused";
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Accepted {
  merchant: Merchant;
  /** the payment named by transaction_id, if one was */
  transaction: Transaction | undefined;
}

/**
 * Throws CheckRefused for input that cannot be checked; reads only. `sandgatePort` is the port this
 * Sandgate is reached on, so a URL at it is refused even before the server knows its own port.
 */
export function accept(deps: Deps, input: CheckInput, sandgatePort: number): Accepted {
  const target = targetCheck(deps.config);
  target.listening(sandgatePort);
  const refused = target.refusal(input.url);
  if (refused) throw new CheckRefused(400, "invalid_url", refused.replace(/notify_url/g, "the receiver's URL"));
  const { records } = deps.store;
  const merchant = records.merchant(input.merchant_id);
  if (!merchant)
    throw new CheckRefused(
      400,
      "unknown_merchant",
      `no merchant ${input.merchant_id} in this Sandgate (neither in its fixtures nor provisioned by a request): the check does not provision one`,
    );
  if (!merchant.accounts[0]) throw new CheckRefused(400, "unknown_merchant", `merchant ${input.merchant_id} has no account to make a payment on`);
  if (input.key !== undefined && input.key === "")
    throw new CheckRefused(400, "invalid_key", "key must not be empty (leave it out to sign with the merchant's key in Sandgate)");
  if (input.transaction_id === undefined) return { merchant, transaction: undefined };
  const transaction = records.transaction(input.transaction_id);
  if (!transaction) throw new CheckRefused(400, "transaction_not_found", `no transaction ${input.transaction_id}`);
  if (transaction.merchant_id !== merchant.merchant_id)
    throw new CheckRefused(400, "transaction_not_found", `transaction ${input.transaction_id} is not merchant ${merchant.merchant_id}'s`);
  return { merchant, transaction };
}
