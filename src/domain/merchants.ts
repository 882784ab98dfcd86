// The caller's merchant and account, found or provisioned on first use (--strict-merchants,
// --merchant-keys, --max-accounts), and the secret key a merchant's signatures are checked with.
import { randomBytes } from "node:crypto";
import { GatewayError } from "./codes.js";
import type { Ids } from "./ids.js";
import type { Account, Merchant } from "./types.js";
import type { Repository } from "./records.js";

const CONNECTORS = ["NorthStar Acquiring", "Meridian Payments", "Harbor Card Services"];

/** The documented secret key of a provisioned merchant, so strict-mode signatures can be computed. */
export const provisionedKey = (merchantId: string) => `sk_test_${merchantId}`;

/**
 * How a provisioned merchant's key is made (--merchant-keys): `id`, the documented sk_test_<id>
 * anyone can compute; `random`, 128 random bits a shared sandbox shows only to its operators, so
 * that with strict signatures one team cannot sign as another.
 */
export type MerchantKeys = "id" | "random";
export const newMerchantKey = (merchantId: string, keys: MerchantKeys) =>
  keys === "random" ? `sk_test_${randomBytes(16).toString("hex")}` : provisionedKey(merchantId);

/** A merchant provisioned now (no accounts yet: each is added on its first use). */
export const provisionedMerchant = (merchantId: string, ids: Ids, keys: MerchantKeys): Merchant => ({
  merchant_id: merchantId,
  name: ids.fakerFor(`merchant|${merchantId}`).company.name(),
  secret_key: newMerchantKey(merchantId, keys),
  registered_ips: ["*"],
  accounts: [],
  provisioned: true,
});

function provisionAccount(merchantId: string, accountId: string, ids: Ids): Account {
  const connector = CONNECTORS[ids.intFor(`connector|${merchantId}|${accountId}`, 0, CONNECTORS.length - 1)]!;
  return {
    account_id: accountId,
    gateway_account: `GW-${accountId}`,
    account_name: `${merchantId} ${accountId}`,
    connector,
    connector_code: connector.slice(0, 3).toUpperCase() + "01",
    descriptor: `SANDBOX*${merchantId}`.slice(0, 22),
    capture_mode: "manual",
    payment_methods: ["card", "pix", "boleto", "ideal", "paypal"],
  };
}

/** The merchant's secret key; one provisioned by the request being handled is not stored yet. */
export const secretKeyOf = (records: Pick<Repository, "merchant">, merchantId: string): string =>
  records.merchant(merchantId)?.secret_key ?? provisionedKey(merchantId);

/** A stored merchant's account. */
export const accountOf = (records: Pick<Repository, "merchant">, merchantId: string, accountId: string): Account | undefined =>
  records.merchant(merchantId)?.accounts.find((a) => a.account_id === accountId);

export interface Caller {
  merchant: Merchant;
  account: Account;
  /** Adds what was provisioned to the state (true when there was something); called only once the request is accepted. */
  commitProvisioning(): boolean;
}

/** What provisioning may do: --strict-merchants, --merchant-keys, --max-accounts. */
export interface Provisioning {
  strictMerchants: boolean;
  merchantKeys: MerchantKeys;
  /** accounts a merchant may have; one more is refused (too_many_accounts) and nothing is kept */
  maxAccounts: number;
}

export function findCaller(
  records: Pick<Repository, "merchant" | "addMerchant" | "changing" | "changed">,
  ids: Ids,
  merchantId: string,
  accountId: string,
  { strictMerchants: strict, merchantKeys: keys, maxAccounts }: Provisioning,
): Caller {
  const known = records.merchant(merchantId);
  if (!known && strict) throw new GatewayError("unknown_merchant", `no merchant "${merchantId}" (--strict-merchants is on)`);
  const merchant: Merchant = known ?? provisionedMerchant(merchantId, ids, keys);
  const knownAccount = merchant.accounts.find((a) => a.account_id === accountId);
  if (!knownAccount && strict) {
    throw new GatewayError("unknown_account", `merchant "${merchantId}" has no account "${accountId}" (--strict-merchants is on)`);
  }
  if (!knownAccount && merchant.accounts.length >= maxAccounts) {
    throw new GatewayError(
      "too_many_accounts",
      `merchant "${merchantId}" has ${merchant.accounts.length} accounts, the most it may have (--max-accounts): use one of them`,
      [
        {
          field: "account_id",
          message: `is not one of the merchant's ${merchant.accounts.length} accounts, and no more are provisioned (--max-accounts ${maxAccounts})`,
        },
      ],
    );
  }
  const account = knownAccount ?? provisionAccount(merchantId, accountId, ids);
  return {
    merchant,
    account,
    commitProvisioning() {
      let added = false;
      if (!known && !records.merchant(merchantId)) {
        records.addMerchant(merchant);
        added = true;
      }
      if (!knownAccount && !merchant.accounts.includes(account)) {
        records.changing("merchants", merchant);
        merchant.accounts.push(account);
        records.changed("merchants", merchant);
        added = true;
      }
      return added;
    },
  };
}
