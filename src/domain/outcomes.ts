// The payment outcome catalogue (data/outcomes.json), typed.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { dataDir } from "../paths.js";
import type { RiskReason } from "../store/types.js";

export type RiskAction = "ACCEPT" | "REVIEW" | "REJECT";
export type ThreeDs = "none" | "frictionless" | "challenge" | "failed" | "external";

export interface PaymentOutcome {
  state: "approved" | "declined" | "pending" | "review";
  result: string;
  risk: RiskAction;
  threeds: ThreeDs;
}

interface Catalogue {
  authorise: Record<string, PaymentOutcome>;
  threeds_results: Record<ThreeDs, string>;
  risk: Record<RiskAction, { score: [number, number]; reasons: RiskReason[] }>;
  antifraud_provider: string;
}

export const catalogue: Catalogue = JSON.parse(readFileSync(resolve(dataDir, "outcomes.json"), "utf8")) as Catalogue;

export function paymentOutcome(name: string): PaymentOutcome {
  const outcome = catalogue.authorise[name];
  if (!outcome) throw new Error(`outcomes.json has no authorise outcome "${name}"`);
  return outcome;
}
