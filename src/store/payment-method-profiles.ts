// fixtures/payment-methods.json: the read-only profiles the optimise operation ranks by. It is
// catalogue data, not state: read from the --fixtures folder (the bundled file when that folder has
// none), checked at boot with errors that name file and path, and never copied into the state file.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import type { MethodProfile } from "../domain/payment-methods.js";
import { defaultFixturesDir } from "../base/paths.js";
import { readFixtureFile } from "./fixtures.js";

const FILE = "payment-methods.json";
const twoPlaces = z.string().regex(/^\d+\.\d{2}$/, "a decimal string with two places");
const region = z.string().regex(/^([A-Z]{2}|\*)$/, 'a two-letter country code (upper case) or "*"');

const profile = z
  .object({
    payment_method: z.string().min(1),
    label: z.string(),
    instant: z.boolean(),
    countries: z.array(region).min(1),
    currencies: z.array(z.string().regex(/^[A-Z]{3}$/, "a three-letter currency code (upper case)")).min(1),
    min_amount: twoPlaces,
    max_amount: twoPlaces,
    approval_rate: z.record(region, z.number().min(0).max(100)).refine((r) => "*" in r, 'needs a "*" entry: the rate in every other country'),
    fee_percent: twoPlaces,
    fee_fixed: twoPlaces,
    settlement_days: z.number().int().nonnegative(),
  })
  .refine((p) => Number(p.min_amount) <= Number(p.max_amount), {
    message: "min_amount must not exceed max_amount",
    path: ["min_amount"],
  }) satisfies z.ZodType<MethodProfile>;

const catalogue = z.array(profile).superRefine((list, ctx) => {
  const seen = new Set<string>();
  list.forEach((p, i) => {
    if (seen.has(p.payment_method)) ctx.addIssue({ code: "custom", path: [i, "payment_method"], message: `"${p.payment_method}" is described twice` });
    seen.add(p.payment_method);
  });
});

const loaded = new Map<string, MethodProfile[]>();

/** The profiles of the fixtures folder (read once per file); throws a FixtureError naming file and path. */
export function loadPaymentMethods(fixturesDir: string): MethodProfile[] {
  const own = resolve(fixturesDir, FILE);
  const file = existsSync(own) ? own : resolve(defaultFixturesDir, FILE);
  const cached = loaded.get(file);
  if (cached) return cached;
  const parsed = readFixtureFile(file, catalogue);
  loaded.set(file, parsed);
  return parsed;
}
