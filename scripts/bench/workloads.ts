// The bench's workloads (issue 9): each request does fresh, valid work.
//   W1 capture 1 new payment per request      W2 capture 50 new payments per request
//   W3 direct payment, new order_no, the interface document's fields (~1.2 KB)
//   W4 query one order_no                     W5 a lifecycle: authorise → capture → 2 partial
//                                                refunds → refund search → query (6 requests)
// A workload prepares what its requests consume (approved payments) before the measured run.
export const SIG = "a".repeat(64);
const ACME = { merchant_id: "M10001", account_id: "A10001" };
const JSON_TYPE = "application/json";
const FORM_TYPE = "application/x-www-form-urlencoded";

export interface Order {
  transaction_id: string;
  order_no: string;
  currency: string;
  amount: string;
}

/** Per connection: what the lifecycle's earlier steps learnt. */
export type Context = Record<string, unknown>;

export interface Step {
  path: string;
  type: string;
  body(context: Context): string;
  /** reads the answer: whether it did what was asked (counted as valid), and what later steps need */
  check(text: string, context: Context): boolean;
}

export interface Workload {
  id: string;
  title: string;
  /** requests in one measured run */
  requests: number;
  /** makes `requests` worth of fresh work on the Sandgate at `url`; without a url, stand-ins for the floor */
  prepare(url: string | undefined, requests: number): Promise<Step[]>;
}

let sequence = 0;
const orderNo = (prefix: string) => `${prefix}-${process.pid}-${++sequence}`;
/** the card every workload pays with */
export const CARD = { card: "4242424242424242", expiration_month: "12", expiration_year: "2030", security_code: "123" };
const payment = (prefix: string) => JSON.stringify({ ...ACME, order_no: orderNo(prefix), currency: "USD", amount: "10.00", ...CARD, encryption_data: SIG });
const envelope = (field: string, orders: object[]) => JSON.stringify({ ...ACME, encryption_data: SIG, [field]: orders });
const identity = (o: Order) => ({ transaction_id: o.transaction_id, order_no: o.order_no, currency: o.currency, amount: o.amount });
const count = (text: string, re: RegExp) => (text.match(re) ?? []).length;

/** A direct payment with the interface document's payment request fields (~1.2 KB of JSON). */
function seedPayment(): string {
  return JSON.stringify({
    ...ACME,
    order_no: orderNo("W3"),
    currency: "USD",
    amount: "25.00",
    item_total: "20.00",
    shipping: "5.00",
    tax_total: "2.00",
    discount: "2.00",
    website: "shop.example.com",
    items: "Tent#,#T-1#,#10.00#,#1#;#Stove#,#S-2#,#5.00#,#2",
    note: "Leave at the door",
    shopper_id: "shopper-42",
    shopper_email: "jane@example.com",
    shopper_ip: "198.51.100.7",
    shopper_phone: "+15550100",
    shopper_level: "1",
    first_name: "Jane",
    last_name: "Doe",
    birth_date: "01-02-1990",
    billing_country: "US",
    billing_state: "CA",
    billing_city: "San Francisco",
    billing_address: "1 Market St",
    billing_postal_code: "94105",
    os: "Windows",
    browser: "Firefox",
    browser_lang: "en-US",
    time_zone: "-8",
    resolution: "1920x1080",
    color_depth: "24",
    delivery_firstname: "Jane",
    delivery_lastname: "Doe",
    delivery_country: "US",
    delivery_state: "CA",
    delivery_city: "Oakland",
    delivery_address: "2 Broadway",
    delivery_postal_code: "94607",
    custom: "cart=77",
    device_fingerprint: "fp-0a1b2c",
    platform_source: "shopware",
    device_type: "PC",
    order_type: "WEB",
    checkout_time: 1767225600,
    user_agent: "Mozilla/5.0 (X11; Linux x86_64)",
    token_flag: "NO",
    ...CARD,
    encryption_data: SIG,
  });
}

async function post(url: string, path: string, type: string, body: string): Promise<string> {
  const res = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": type }, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`bench setup: ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

/** Approved, authorised (manual capture) payments made through the API, 50 at a time. */
export async function createPayments(url: string, prefix: string, n: number): Promise<Order[]> {
  const orders: Order[] = [];
  while (orders.length < n) {
    const bodies = Array.from({ length: Math.min(50, n - orders.length) }, () => payment(prefix));
    const answers = await Promise.all(bodies.map((b) => post(url, "/v1/authorise", JSON_TYPE, b)));
    answers.forEach((xml, i) => {
      const id = /<transaction_id>(\d+)<\/transaction_id>/.exec(xml)?.[1];
      if (!id) throw new Error(`bench setup: no transaction_id in ${xml.slice(0, 300)}`);
      orders.push({ transaction_id: id, order_no: (JSON.parse(bodies[i]!) as { order_no: string }).order_no, currency: "USD", amount: "10.00" });
    });
  }
  return orders;
}

/** The floor gets stand-in orders of the same shape: nothing to prepare, the same bytes to send. */
const standIns = (n: number): Order[] =>
  Array.from({ length: n }, (_, i) => ({ transaction_id: String(9_000_000_000_000_000 + i), order_no: orderNo("FLOOR"), currency: "USD", amount: "10.00" }));
const ordersFor = (url: string | undefined, prefix: string, n: number) => (url ? createPayments(url, prefix, n) : Promise.resolve(standIns(n)));

function cycle<T>(items: T[]): () => T {
  let i = 0;
  return () => items[i++ % items.length]!;
}

export const WORKLOADS: Workload[] = [
  {
    id: "W1",
    title: "capture 1 new payment",
    requests: 4000,
    async prepare(url, requests) {
      const next = cycle(await ordersFor(url, "W1", requests));
      return [
        { path: "/v1/capture", type: JSON_TYPE, body: () => envelope("capture_orders", [identity(next())]), check: (t) => t.includes('"capture_status":"1"') },
      ];
    },
  },
  {
    id: "W2",
    title: "capture 50 new payments",
    // 20,000 payments per run: a run of 200 lasted a tenth of a second, which one GC could move
    requests: 400,
    async prepare(url, requests) {
      const orders = await ordersFor(url, "W2", requests * 50);
      let i = 0;
      const next50 = () => orders.slice((i % requests) * 50, (i++ % requests) * 50 + 50).map(identity);
      return [
        { path: "/v1/capture", type: JSON_TYPE, body: () => envelope("capture_orders", next50()), check: (t) => count(t, /"capture_status":"1"/g) === 50 },
      ];
    },
  },
  {
    id: "W3",
    title: "direct payment, the interface document's fields (~1.2 KB)",
    requests: 4000,
    prepare: async () => [{ path: "/v1/authorise", type: JSON_TYPE, body: seedPayment, check: (t) => t.includes("<order_status>1</order_status>") }],
  },
  {
    id: "W4",
    title: "query one order_no",
    requests: 4000,
    async prepare(url) {
      const next = cycle(await ordersFor(url, "W4", 200));
      return [
        {
          path: "/v1/retrievalTrans",
          type: FORM_TYPE,
          body: () => new URLSearchParams({ ...ACME, order_no: next().order_no, encryption_data: SIG }).toString(),
          check: (t) => t.includes('"query_result":"1"'),
        },
      ];
    },
  },
  {
    id: "W5",
    title: "lifecycle: authorise, capture, 2 refunds, refund search, query",
    requests: 3000,
    async prepare() {
      const order = (c: Context) => identity(c.order as Order);
      return [
        {
          path: "/v1/authorise",
          type: JSON_TYPE,
          body: (c) => {
            const body = payment("W5");
            c.order = { transaction_id: "", order_no: (JSON.parse(body) as { order_no: string }).order_no, currency: "USD", amount: "10.00" };
            return body;
          },
          check: (t, c) => {
            (c.order as Order).transaction_id = /<transaction_id>(\d+)</.exec(t)?.[1] ?? "";
            return t.includes("<order_status>1</order_status>");
          },
        },
        { path: "/v1/capture", type: JSON_TYPE, body: (c) => envelope("capture_orders", [order(c)]), check: (t) => t.includes('"capture_status":"1"') },
        {
          path: "/v1/refund",
          type: JSON_TYPE,
          body: (c) => envelope("refund_orders", [{ ...order(c), refund_amount: "3.00" }]),
          check: (t) => t.includes('"refund_status":"1"'),
        },
        {
          path: "/v1/refund",
          type: JSON_TYPE,
          body: (c) => envelope("refund_orders", [{ ...order(c), refund_amount: "2.00" }]),
          check: (t) => t.includes('"refund_status":"1"'),
        },
        {
          path: "/v1/retrievalRefund",
          type: FORM_TYPE,
          body: (c) => new URLSearchParams({ ...ACME, transaction_id: order(c).transaction_id, encryption_data: SIG }).toString(),
          check: (t) => count(t, /"refund_reference_id"/g) === 2,
        },
        {
          path: "/v1/retrievalTrans",
          type: FORM_TYPE,
          body: (c) => new URLSearchParams({ ...ACME, order_no: order(c).order_no, encryption_data: SIG }).toString(),
          check: (t) => t.includes('"payment_status":"4000"'),
        },
      ];
    },
  },
];
