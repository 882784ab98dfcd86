// The load of the fault tests (test/redis-faults.test.ts) and `npm run bench:faults`: clients that
// send each request to the next replica in turn, a merchant's direct payments, refunds of 1.00
// racing over a few captured payments (enough to run them dry: over-refunds are refused), and
// queries of payments acknowledged earlier. What was acknowledged is kept, so that once the faults
// stop check() can say whether the sandbox holds exactly that on every replica.
import { performance } from "node:perf_hooks";

const MERCHANT = { merchant_id: "M10001", account_id: "A10001", encryption_data: "a".repeat(64) };
const CARD = { card: "4242424242424242", expiration_month: "12", expiration_year: "2030", security_code: "123" };
/** the captured payments the refunds race over, and their amount */
const REFUNDABLE = 4;
const CAPTURED = "100.00";
/** a request not answered within this long counts as failed (a hang) */
const REQUEST_TIMEOUT_MS = 10_000;

interface Order {
  transaction_id: string;
  order_no: string;
  currency: string;
  amount: string;
}

export interface LoadResult {
  requests: number;
  /** answered 5xx, or not answered at all */
  failed: number;
  /** each failed request: what it was and what came back */
  failures: string[];
  /** the slowest answer, ms */
  slowestMs: number;
  payments: string[];
  /** refund_reference_id accepted, by transaction_id */
  refunds: Map<string, string[]>;
  /** refunds whose answer was a failure: they may or may not have happened */
  unsureRefunds: Map<string, number>;
  refundable: Order[];
}

let sequence = 0;
const orderNo = () => `F-${process.pid}-${Date.now().toString(36)}-${++sequence}`;

async function send(url: string, path: string, body: object): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: res.status, text: await res.text() };
}

const tag = (xml: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? "";

/** Payments captured for the refunds to race over (sent before any fault). */
export async function prepare(url: string): Promise<Order[]> {
  const orders: Order[] = [];
  for (let i = 0; i < REFUNDABLE; i++) {
    const order_no = orderNo();
    const paid = await send(url, "/v1/authorise", { ...MERCHANT, ...CARD, order_no, currency: "USD", amount: CAPTURED });
    const order = { transaction_id: tag(paid.text, "transaction_id"), order_no, currency: "USD", amount: CAPTURED };
    const captured = await send(url, "/v1/capture", { ...MERCHANT, capture_orders: [order] });
    if (!order.transaction_id || !captured.text.includes('"capture_status":"1"'))
      throw new Error(`could not prepare a captured payment: ${paid.text} ${captured.text}`);
    orders.push(order);
  }
  return orders;
}

/**
 * `clients` loops, each request to the next of `urls`, for `ms` or until `goOn` (asked before each
 * request with what was done so far) says to stop: a test runs until its faults are made, a bench for a time.
 */
export async function load(
  urls: string[],
  refundable: Order[],
  { clients = 8, ms = 10_000, goOn = () => true }: { clients?: number; ms?: number; goOn?: (done: LoadResult) => boolean } = {},
): Promise<LoadResult> {
  const result: LoadResult = { requests: 0, failed: 0, failures: [], slowestMs: 0, payments: [], refunds: new Map(), unsureRefunds: new Map(), refundable };
  const until = performance.now() + ms;
  let next = 0;
  const client = async (id: number) => {
    for (let i = 0; performance.now() < until && goOn(result); i++) {
      const url = urls[next++ % urls.length]!;
      const kind = (i + id) % 10 < 5 ? "pay" : (i + id) % 10 < 8 ? "refund" : "query";
      const order = refundable[(i * 7 + id) % refundable.length]!;
      const started = performance.now();
      let answer: { status: number; text: string } | undefined;
      let error = "";
      try {
        if (kind === "pay") answer = await send(url, "/v1/authorise", { ...MERCHANT, ...CARD, order_no: orderNo(), currency: "USD", amount: "10.00" });
        else if (kind === "refund") answer = await send(url, "/v1/refund", { ...MERCHANT, refund_orders: [{ ...order, refund_amount: "1.00" }] });
        else {
          const paid = result.payments[(i * 13 + id) % Math.max(1, result.payments.length)] ?? order.transaction_id;
          answer = await send(url, "/v1/retrievalTrans", { ...MERCHANT, transaction_id: paid });
          if (answer.status === 200 && !answer.text.includes(paid)) error = `acknowledged payment ${paid} not found: ${answer.text.slice(0, 200)}`;
        }
      } catch (err) {
        error = (err as Error).message;
      }
      result.requests++;
      result.slowestMs = Math.max(result.slowestMs, performance.now() - started);
      if (!answer || answer.status >= 500 || error) {
        result.failed++;
        if (result.failures.length < 20)
          result.failures.push(`${kind} via ${url}: ${answer ? `${answer.status} ${answer.text.slice(0, 160)}` : ""} ${error}`.trim());
        if (kind === "refund") result.unsureRefunds.set(order.transaction_id, (result.unsureRefunds.get(order.transaction_id) ?? 0) + 1);
        continue;
      }
      if (kind === "pay" && tag(answer.text, "result_info") === "0000:Success") result.payments.push(tag(answer.text, "transaction_id"));
      if (kind === "refund") {
        const refund = (JSON.parse(answer.text) as { refund_orders?: { refund_status: string; refund_reference_id: string }[] }).refund_orders?.[0];
        if (refund?.refund_status === "1")
          result.refunds.set(order.transaction_id, [...(result.refunds.get(order.transaction_id) ?? []), refund.refund_reference_id]);
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, id) => client(id)));
  return result;
}

/**
 * What is wrong with the sandbox after `result`, asked of every replica (faults off): an
 * acknowledged payment or refund missing, a refund applied twice, more refunded than captured, or
 * two replicas that answer differently. Empty: nothing.
 */
export async function check(urls: string[], result: LoadResult): Promise<string[]> {
  const problems: string[] = [];
  const listed = await Promise.all(
    urls.map(async (url) => {
      const res = await fetch(`${url}/__sandbox/transactions?merchant_id=${MERCHANT.merchant_id}`);
      if (res.status !== 200) throw new Error(`${url} lists no payments: ${res.status} ${await res.text()}`);
      const { transactions } = (await res.json()) as { transactions: { transaction_id: string; status: string }[] };
      return new Map(transactions.map((t) => [t.transaction_id, t.status]));
    }),
  );
  const [first, ...others] = listed;
  for (const id of result.payments) if (!first!.has(id)) problems.push(`acknowledged payment ${id} is missing`);
  for (const [i, other] of others.entries()) {
    const differ = [...new Set([...first!.keys(), ...other.keys()])].filter((id) => first!.get(id) !== other.get(id));
    if (differ.length) problems.push(`replicas 1 and ${i + 2} disagree on ${differ.length} payments, e.g. ${differ[0]}`);
  }
  for (const order of result.refundable) {
    const searched = await Promise.all(
      urls.map(async (url) => {
        const { text } = await send(url, "/v1/retrievalRefund", { ...MERCHANT, transaction_id: order.transaction_id });
        return ((JSON.parse(text) as { refund_orders: { refund_reference_id: string; refund_amount: string }[] }).refund_orders ?? []).map(
          (r) => [r.refund_reference_id, r.refund_amount] as const,
        );
      }),
    );
    const ids = searched[0]!.map(([id]) => id);
    if (searched.some((s) => JSON.stringify(s) !== JSON.stringify(searched[0]))) problems.push(`replicas list different refunds of ${order.transaction_id}`);
    const accepted = result.refunds.get(order.transaction_id) ?? [];
    const unsure = result.unsureRefunds.get(order.transaction_id) ?? 0;
    for (const id of accepted) if (!ids.includes(id)) problems.push(`acknowledged refund ${id} of ${order.transaction_id} is missing`);
    if (new Set(ids).size !== ids.length) problems.push(`a refund of ${order.transaction_id} is listed twice`);
    if (ids.length > accepted.length + unsure)
      problems.push(`${order.transaction_id} has ${ids.length} refunds: ${accepted.length} acknowledged, ${unsure} unanswered`);
    const cents = searched[0]!.reduce((sum, [, amount]) => sum + Math.round(Number(amount) * 100), 0);
    if (cents > Math.round(Number(CAPTURED) * 100)) problems.push(`${order.transaction_id} refunded ${cents / 100}, more than ${CAPTURED}`);
  }
  return problems;
}
