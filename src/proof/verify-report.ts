// What verify is asked and what it answers: its options and its report. Apart from verify.ts so
// that what only passes them on (the worker thread's runner, the report's renderers, the target)
// depends on these shapes, not on the replay and the in-process Sandgate behind it.
import type { Difference } from "./compare.js";
import type { Suggestions } from "./suggest.js";

export interface VerifyOptions {
  /** a running Sandgate's URL; by default a fresh one is started in this process */
  against?: string;
  /** the merchant's key in Sandgate, for every request (default: the fixture's, or a provisioned merchant's) */
  key?: string;
  /** paths left out of the comparison, e.g. respon.risk_score, orders_list[*].transaction_date */
  ignore?: readonly string[];
  /** for the fresh Sandgate: scenario folder, global scenario, fixtures, seed */
  scenarios?: string;
  scenario?: string;
  fixtures?: string;
  seed?: string;
  /** with --against and ADMIN_TOKEN set there: to have it deliver notifications after each exchange */
  adminToken?: string;
  /** also work out the scenario rules that close what data can close (--suggest) */
  suggest?: boolean;
}

export interface ExchangeResult {
  exchange: number;
  kind: "gateway" | "page" | "notification";
  operation: string;
  method: string;
  path: string;
  differences: number;
}

export interface VerifyReport {
  target: string;
  exchanges: ExchangeResult[];
  notifications: { recorded: number; sent: number; compared: boolean };
  differences: Difference[];
  /** with `suggest`: the rules that close what data can close, and the rest as Sandgate defects */
  suggestions?: Suggestions;
}
