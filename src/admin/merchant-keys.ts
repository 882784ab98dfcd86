// /__sandbox/merchants/{merchant_id}: a merchant and its secret key, for the operators of a shared
// sandbox. With --merchant-keys random a provisioned merchant's key is random, so CI asks for it
// here (or with `sandgate ctl merchant key <id>`) before it signs: PUT provisions the merchant when
// Sandgate does not know it yet (its accounts are added on their first use), GET reads one it knows.
// POST …/rotate-key gives a merchant a new random key, when a captured signature or a key that
// left the team must stop working. Behind ADMIN_TOKEN like every operator call. Mounted by operatorApi.
import { type Response } from "express";
import type { Deps } from "../deps/deps.js";
import { depsOf } from "../http/in-unit.js";
import type { On } from "./call-handlers.js";
import { newMerchantKey, provisionedMerchant } from "../domain/merchants.js";
import type { Merchant } from "../domain/types.js";
import { problem, pathParam } from "./shared.js";
import { ID_MAX } from "../http/fields.js";

/** What an operator is shown of a merchant. */
const merchantView = (m: Merchant) => ({
  merchant_id: m.merchant_id,
  name: m.name,
  secret_key: m.secret_key,
  provisioned: m.provisioned === true,
  accounts: m.accounts.map((a) => ({ account_id: a.account_id, capture_mode: a.capture_mode })),
});

/** visible ASCII, as long as a gateway request's merchant_id may be (ID_MAX) */
const MERCHANT_ID = new RegExp(`^[\\x21-\\x7e]{1,${ID_MAX}}$`);

export function merchantsApi(server: Deps, on: On): void {
  const badId = (res: Response, id: string) =>
    problem(res, 400, "invalid_merchant_id", `"${id}" is not a merchant id: 1 to ${ID_MAX} visible ASCII characters`);

  on("getMerchant", (req, res) => {
    const deps = depsOf(res, server);
    const id = pathParam(req, "merchant_id");
    const merchant = deps.store.records.merchant(id);
    if (!merchant) return problem(res, 404, "merchant_not_found", `no merchant ${id}: PUT /__sandbox/merchants/${id} provisions it`);
    res.json({ merchant: merchantView(merchant) });
  });

  on("provisionMerchant", async (req, res) => {
    const deps = depsOf(res, server);
    const id = pathParam(req, "merchant_id");
    if (!MERCHANT_ID.test(id)) return badId(res, id);
    const known = deps.store.records.merchant(id);
    if (known) return void res.json({ merchant: merchantView(known), created: false });
    if (deps.config.strictMerchants)
      return problem(res, 404, "merchant_not_found", `no merchant ${id} (--strict-merchants is on: the fixtures' merchants only)`);
    const merchant = provisionedMerchant(id, deps.store.ids, deps.config.merchantKeys);
    deps.store.records.addMerchant(merchant);
    await deps.store.commit();
    res.json({ merchant: merchantView(merchant), created: true });
  });

  on("rotateMerchantKey", async (req, res) => {
    const deps = depsOf(res, server);
    const id = pathParam(req, "merchant_id");
    if (deps.config.merchantKeys !== "random") {
      return problem(
        res,
        409,
        "keys_not_random",
        "with --merchant-keys id a provisioned merchant's key is sk_test_<id>, which anyone can compute: start Sandgate with --merchant-keys random to rotate keys",
      );
    }
    const merchant = deps.store.records.merchant(id);
    if (!merchant) return problem(res, 404, "merchant_not_found", `no merchant ${id}: PUT /__sandbox/merchants/${id} provisions it`);
    deps.store.records.changing("merchants", merchant);
    merchant.secret_key = newMerchantKey(id, "random");
    deps.store.records.changed("merchants", merchant);
    await deps.store.commit();
    res.json({ merchant: merchantView(merchant) });
  });
}
