// What an operation answers before it is rendered and signed: one of the three formats, its status,
// and what the request log keeps of it. Apart from operation.ts so that refusal.ts, which makes
// replies too, does not import the pipeline that imports it.
import type { XmlNode } from "../base/markup.js";

type Payload = { xml: XmlNode[] } | { json: Record<string, unknown> } | { html: string };

export type Reply = Payload & {
  status?: number;
  /** true when the operation changed state and the store must be written before answering */
  changed: boolean;
  /** what the request log records as the outcome, e.g. "0000:Success" */
  result: string;
  /** the scenario rule that decided the outcome, sent as X-Sandbox-Rule */
  rule?: string;
  /** something the tester should know that the answer does not say (kept in the request log) */
  note?: string;
};
