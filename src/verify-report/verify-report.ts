// What verify is asked and what it answers: its options and its report. Apart from verify.ts so
// that what only passes them on (the worker thread's runner, the report's renderers, the target)
// depends on these shapes, not on the replay and the in-process Sandgate behind it: the server (the
// dashboard, /__sandbox/verify) reads these and never imports proof/, which runs in a worker.
import type { ScenarioFile } from "../scenarios/schema.js";

export const DIFFERENCE_KINDS = ["status", "content_type", "missing", "extra", "order", "shape", "value"] as const;
export type DifferenceKind = (typeof DIFFERENCE_KINDS)[number];

/** One difference: where (the exchange's number in the recording, its operation, a path in its answer), what kind, both sides. */
export interface Difference {
  exchange: number;
  operation: string;
  path: string;
  kind: DifferenceKind;
  /** what the recording holds (the real gateway) */
  expected: string;
  /** what Sandgate answered */
  actual: string;
  note?: string;
  /** a shape difference's recorded text as it was (expected says its shape too), for --suggest */
  expected_value?: string;
}

/** What each kind of difference means and what to do about it: the terminal, the README and the dashboard say the same. */
export const KIND_MEANINGS: Record<DifferenceKind, { means: string; todo: string }> = {
  status: { means: "the HTTP status differs", todo: "a Sandgate defect, unless a scenario rule sets `status` for this request" },
  content_type: { means: "the answer's media type differs (XML, JSON, HTML, form)", todo: "a Sandgate defect: report it" },
  missing: {
    means: "the gateway sent a field, element or notification Sandgate did not",
    todo: "a Sandgate defect: report it (--ignore the path if your integration never reads it)",
  },
  extra: {
    means: "Sandgate sent a field, element or notification the gateway did not",
    todo: "a Sandgate defect: report it (--ignore the path if your integration never reads it)",
  },
  order: { means: "the same XML children in another order", todo: "a Sandgate defect: report it (a parser that reads by position breaks on it)" },
  shape: { means: "a value of another form: empty vs set, text vs number, decimals, date format, CODE:text, …", todo: "a Sandgate defect: report it" },
  value: {
    means: "a value that must agree differs: a status, a result code or text, a currency, an amount, an echoed field",
    todo: "often closed with data: --suggest writes the scenario rule that gives the gateway's value",
  },
};

export interface Suggestions {
  scenario: ScenarioFile;
  /** the differences the rules are made to close */
  closes: Difference[];
  /** the differences data cannot close: "Sandgate defect: …", ready for a bug report */
  defects: string[];
}

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
