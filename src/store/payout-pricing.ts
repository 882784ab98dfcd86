// fixtures/payout-pricing.json: the fee and FX table of payouts. Read once at start and checked
// like every fixture (errors name file and path). A fixtures folder without the file uses the
// bundled one, so a custom --fixtures folder only needs it to change the prices.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import type { PayoutPricing } from "../domain/payout-rules.js";
import { defaultFixturesDir } from "../base/paths.js";
import { readFixtureFile } from "./fixtures.js";

const CURRENCY = /^[A-Z]{3}$/;
const rate = z
  .string()
  .regex(/^\d{1,9}(\.\d{1,6})?$/, "a decimal string with up to 6 places")
  .refine((s) => Number(s) > 0, "must be greater than 0");
const code = z.string().regex(CURRENCY, "a three-letter currency code in capitals");

const pricing = z
  .object({
    fx: z.object({ base: code, rates: z.record(code, rate) }),
    fees: z.record(
      z.string().min(1),
      z.object({
        fixed: z.string().regex(/^\d{1,9}\.\d{2}$/, "a decimal string with two places"),
        fixed_currency: code,
        percent: z.string().regex(/^\d{1,3}(\.\d{1,6})?$/, "a percentage such as 0.50"),
      }),
    ),
    clearing_systems: z.object({
      countries: z.record(z.string().regex(/^[A-Z]{2}$/, "a two-letter country code"), z.string()),
      currencies: z.record(code, z.string()),
    }),
  })
  .superRefine((p, ctx) => {
    if (!p.fx.rates[p.fx.base]) ctx.addIssue({ code: "custom", path: ["fx", "rates", p.fx.base], message: "the base currency needs a rate (1)" });
    for (const [method, fee] of Object.entries(p.fees)) {
      if (!p.fx.rates[fee.fixed_currency])
        ctx.addIssue({ code: "custom", path: ["fees", method, "fixed_currency"], message: `${fee.fixed_currency} has no rate in fx.rates` });
    }
    if (Object.keys(p.fees).length === 0) ctx.addIssue({ code: "custom", path: ["fees"], message: "at least one payment_method" });
  }) satisfies z.ZodType<PayoutPricing>;

const PRICING_FILE = "payout-pricing.json";

export function loadPayoutPricing(dir: string): PayoutPricing {
  const own = resolve(dir, PRICING_FILE);
  const file = existsSync(own) ? own : resolve(defaultFixturesDir, PRICING_FILE);
  return readFixtureFile(file, pricing);
}
