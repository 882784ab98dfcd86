// verify --suggest: the differences data can close, as a scenario file Sandgate loads as it is
// (rules for the same requests, by order_no or a payout's request_id, that give the gateway's
// result codes, texts, states and payout failures), and the rest as Sandgate defects, one line each.
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { codes } from "../domain/codes.js";
import { catalogue } from "../domain/outcomes.js";
import type { Rule, ScenarioFile } from "../scenarios/schema.js";
import type { Difference, Suggestions } from "../verify-report/verify-report.js";
import { readTree } from "./documents.js";

const SUGGESTED_SCENARIO = "suggested";

/** What verify knows of a replayed gateway request: its operation and its fields as sent. */
export interface ReplayedRequest {
  operation: string;
  fields: Record<string, unknown>;
  /** the recorded answer's body: a payment's rule keeps its recorded order_status even where it agreed */
  recorded?: string;
}

const BATCH_ARRAYS: Record<string, string> = { capture: "capture_orders", review: "review_orders", cancel: "cancel_orders", refund: "refund_orders" };
const DECLINED: Record<string, string> = { capture: "capture_declined", review: "review_declined", cancel: "cancel_declined", refund: "refund_declined" };
const ORDER_STATUS_OF_STATE: Record<string, string> = {
  approved: codes.order_status.success,
  declined: codes.order_status.failure,
  cancelled: codes.order_status.failure,
  pending: codes.order_status.pending,
  review: codes.order_status.review,
};
/** fields of an authorise answer a rule sets directly */
const PAYMENT_FIELDS = new Set(["result_info", "threeds_result", "risk_action"]);

export function suggest(differences: readonly Difference[], requests: ReadonlyMap<number, ReplayedRequest>, extendsScenario: string): Suggestions {
  const rules: Rule[] = [];
  const closes: Difference[] = [];
  const defects: string[] = [];
  const byExchange = new Map<number, Difference[]>();
  const unclosed: Difference[] = [];
  for (const d of differences) {
    const request = requests.get(d.exchange);
    // a result text where Sandgate has none (or the other way round) is a shape difference a rule closes too
    const text = d.kind === "value" ? d.expected : d.kind === "shape" ? d.expected_value : undefined;
    if (text !== undefined && request && closable(d, request)) byExchange.set(d.exchange, [...(byExchange.get(d.exchange) ?? []), { ...d, expected: text }]);
    else unclosed.push(d);
  }
  // a difference on an order whose earlier request a rule closes is most likely its knock-on (a
  // refused refund leaves more to refund, a declined payment nothing to capture): said as such
  const closedAt = new Map<string, number>();
  for (const [exchange] of [...byExchange].sort(([a], [b]) => a - b))
    for (const order of ordersOf(requests.get(exchange)!)) if (!closedAt.has(order)) closedAt.set(order, exchange);
  for (const d of unclosed) {
    const request = requests.get(d.exchange);
    const cause =
      request &&
      ordersOf(request)
        .map((o) => closedAt.get(o))
        .find((at) => at !== undefined && at < d.exchange);
    defects.push(cause === undefined ? defectLine(d) : knockOnLine(d, cause));
  }
  const sent = ordersSent(requests);
  for (const [exchange, found] of byExchange) {
    const request = requests.get(exchange)!;
    for (const rule of rulesFor(exchange, request, found, sent)) rules.push(rule);
    closes.push(...found.map((d) => differences.find((o) => o.exchange === d.exchange && o.path === d.path)!));
  }
  const scenario: ScenarioFile = {
    $schema: "./scenario.schema.json",
    name: SUGGESTED_SCENARIO,
    description: `What sandgate verify learned from a recording of the real gateway: its answers for the recorded requests, on top of ${extendsScenario}.`,
    extends: extendsScenario,
    rules,
  };
  return { scenario, closes, defects };
}

function closable(d: Difference, request: ReplayedRequest): boolean {
  const field = d.path.split(".").at(-1)!;
  if (request.operation === "authorise" || request.operation === "apm")
    return d.path === "respon.order_status" || (d.path.startsWith("respon.") && PAYMENT_FIELDS.has(field));
  if (request.operation === "payout") return ["status", "failure_type", "failure_reason"].includes(d.path);
  const array = BATCH_ARRAYS[request.operation];
  return !!array && new RegExp(`^${array}\\[\\d+\\]\\.\\w+$`).test(d.path);
}

/**
 * Every order the recording sent, counted over all its requests (those that differed or not): the
 * place of each among the requests of its operation that named its order_no, and how many did. A
 * rule for an order sent more than once says which call it is for (nth), or it would decide the
 * others too (a refund refused once and accepted the second time needs two rules, not one).
 */
function ordersSent(requests: ReadonlyMap<number, ReplayedRequest>): { place: Map<string, number>; times: Map<string, number> } {
  const place = new Map<string, number>();
  const times = new Map<string, number>();
  for (const [exchange, { operation, fields }] of [...requests].sort(([a], [b]) => a - b)) {
    const array = BATCH_ARRAYS[operation];
    const orders = array ? ((fields[array] ?? []) as Record<string, unknown>[]) : operation === "authorise" || operation === "apm" ? [fields] : [];
    orders.forEach((order, i) => {
      const key = `${operation}|${String(order?.order_no ?? "")}`;
      times.set(key, (times.get(key) ?? 0) + 1);
      place.set(`${exchange}|${i}`, times.get(key)!);
    });
  }
  return { place, times };
}

/** The rules of one exchange: one for a payment or a payout, one per order of a batch. */
function rulesFor(exchange: number, request: ReplayedRequest, found: Difference[], sent: ReturnType<typeof ordersSent>): Rule[] {
  const { operation, fields } = request;
  /** `nth` for the i-th order of this exchange, when its order was sent more than once */
  const nthOf = (i: number, orderNo: string): Record<string, number> =>
    (sent.times.get(`${operation}|${orderNo}`) ?? 1) > 1 ? { nth: sent.place.get(`${exchange}|${i}`)! } : {};
  const description = `exchange #${exchange}: ${found.map((d) => `${d.path} ${d.expected}`).join(", ")}`;
  if (operation === "payout") {
    const payout: Record<string, string> = {};
    for (const d of found) payout[d.path] = d.expected;
    return [{ id: `verify-${exchange}-payout`, description, when: { operation, request_id: String(fields.request_id ?? "") }, then: { payout } }];
  }
  if (operation === "authorise" || operation === "apm") {
    const orderNo = String(fields.order_no ?? "");
    const wanted: Record<string, string> = {
      ...recordedStatus(request.recorded),
      ...Object.fromEntries(found.map((d) => [d.path.slice("respon.".length), d.expected])),
    };
    return [{ id: `verify-${exchange}-${operation}`, description, when: { operation, order_no: orderNo, ...nthOf(0, orderNo) }, then: paymentThen(wanted) }];
  }
  const array = (fields[BATCH_ARRAYS[operation]!] ?? []) as Record<string, unknown>[];
  const byOrder = new Map<number, Difference[]>();
  for (const d of found) {
    const i = Number(/\[(\d+)\]/.exec(d.path)![1]);
    byOrder.set(i, [...(byOrder.get(i) ?? []), d]);
  }
  return [...byOrder].map(([i, list]) => {
    const orderNo = String(array[i]?.order_no ?? "");
    const set = Object.fromEntries(list.map((d) => [d.path.split(".").at(-1)!, d.expected]));
    const failed = Object.entries(set).some(([k, v]) => k.endsWith("_status") && v === codes.batch_status.failed);
    return {
      id: `verify-${exchange}-${operation}-${i + 1}`,
      description: `exchange #${exchange}, order ${orderNo}: ${list.map((d) => `${d.path.split(".").at(-1)} ${d.expected}`).join(", ")}`,
      when: { operation, order_no: orderNo, ...nthOf(i, orderNo) },
      // a refused order must not change the payment; its code and text are the gateway's
      then: { ...(failed ? { outcome: DECLINED[operation]! } : {}), fields: set },
    };
  });
}

/** The order_status of a recorded authorise answer (XML), when it has one. */
function recordedStatus(body: string | undefined): { order_status?: string } {
  const tree = body ? readTree("xml", body) : undefined;
  const respon = tree?.kind === "object" ? tree.entries[0]?.[1] : undefined;
  const status = respon?.kind === "object" ? respon.entries.find(([k]) => k === "order_status")?.[1] : undefined;
  return status?.kind === "value" && typeof status.value === "string" ? { order_status: status.value } : {};
}

/** The catalogue outcome with the recorded order_status (and result code, when one has it), plus the texts as fields. */
function paymentThen(wanted: Record<string, string>): Rule["then"] {
  const payments = Object.entries(catalogue.authorise);
  const status = wanted.order_status;
  const code = wanted.result_info?.split(":")[0];
  const statusOf = (o: { state: string }) => ORDER_STATUS_OF_STATE[o.state];
  const codeOf = (o: { result: string }) => codes.results[o.result]?.code;
  const pick =
    payments.find(([, o]) => (status === undefined || statusOf(o) === status) && (code === undefined || codeOf(o) === code)) ??
    (status === undefined ? undefined : payments.find(([, o]) => statusOf(o) === status));
  const fields = Object.fromEntries(Object.entries(wanted).filter(([k]) => k !== "order_status"));
  return { ...(pick ? { outcome: pick[0] } : {}), ...(Object.keys(fields).length ? { fields } : {}) };
}

/** The order_no values a request names: a payment's or a query's own, or each of a batch's orders. */
function ordersOf({ operation, fields }: ReplayedRequest): string[] {
  const array = BATCH_ARRAYS[operation];
  const orders = array ? ((fields[array] ?? []) as Record<string, unknown>[]).map((o) => o?.order_no) : [fields.order_no];
  return orders.flatMap((o) => (typeof o === "string" && o !== "" ? o.split(",") : []));
}

/** A difference that follows from an earlier one a rule closes: verify again with the suggested rules first. */
function knockOnLine(d: Difference, cause: number): string {
  return `Knock-on of exchange #${cause} (a rule above closes it): ${defectLine(d).replace(/^Sandgate defect: /, "")} Verify again with the suggested rules before reporting it.`;
}

function defectLine(d: Difference): string {
  const what: Record<Difference["kind"], string> = {
    status: `answers HTTP ${d.actual} where the gateway answers ${d.expected}`,
    content_type: `answers ${d.actual} where the gateway answers ${d.expected}`,
    missing: `lacks ${d.path}, which the gateway sends (${d.expected})`,
    extra: `sends ${d.path} (${d.actual}), which the gateway does not`,
    order: `orders the children of ${d.path} as ${d.actual}; the gateway as ${d.expected}`,
    shape: `gives ${d.path} as ${d.actual}; the gateway as ${d.expected}`,
    value: `gives ${d.path} = ${d.actual}; the gateway ${d.expected}`,
  };
  return `Sandgate defect: ${d.operation}: Sandgate ${what[d.kind]} (recording exchange #${d.exchange}).`;
}

/** Writes dir/suggested.json, and copies the scenarios it extends from the folder in force when dir lacks them. */
export function writeSuggestions(dir: string, suggestions: Suggestions, scenariosDir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(scenariosDir)) if (/\.(json|ya?ml)$/.test(f) && !existsSync(join(dir, f))) copyFileSync(join(scenariosDir, f), join(dir, f));
  const file = join(dir, `${SUGGESTED_SCENARIO}.json`);
  writeFileSync(file, `${JSON.stringify(suggestions.scenario, null, 2)}\n`);
  return file;
}
