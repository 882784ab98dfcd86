// verify --suggest: rules for an order the recording sent more than once, and differences that follow from another.
// For an order the recording sent more than once: every rule for it says which
// call it is for (nth), counted over all the recorded requests, those that agreed too. Before, only
// requests with differences were counted: a refund refused first and accepted the second time got
// one rule without nth, which then refused the first call too and broke the exchange that had matched.
import { describe, expect, test } from "vitest";
import { suggest, type ReplayedRequest } from "../src/proof/suggest.js";
import type { Difference } from "../src/verify-report/verify-report.js";

const refund = (order_no: string, amount: string): ReplayedRequest => ({
  operation: "refund",
  fields: { refund_orders: [{ transaction_id: "T1", order_no, currency: "USD", amount: "100.00", refund_amount: amount }] },
});
const authorise = (order_no: string): ReplayedRequest => ({ operation: "authorise", fields: { order_no } });
const differs = (exchange: number, operation: string, path: string, expected: string, actual: string): Difference => ({
  exchange,
  operation,
  path,
  kind: "value",
  expected,
  actual,
});

describe("--suggest and orders sent more than once", () => {
  test("a refund refused the first time and accepted the second: the rule is for the first call (nth 1), the second is left alone", () => {
    const requests = new Map<number, ReplayedRequest>([
      [1, authorise("ORD-1")],
      [2, refund("ORD-1", "30.00")],
      [3, refund("ORD-1", "30.00")],
    ]);
    // the gateway refused the first refund; Sandgate accepted it. The second agreed
    const found = [
      differs(2, "refund", "refund_orders[0].refund_status", "0", "1"),
      differs(2, "refund", "refund_orders[0].refund_message", "E0499:Refund not allowed", "0000:Refund accepted"),
    ];
    const { scenario } = suggest(found, requests, "default");
    expect(scenario.rules.map((r) => r.when)).toEqual([{ operation: "refund", order_no: "ORD-1", nth: 1 }]);
  });

  test("the second of two calls differs: its rule says nth 2; an order sent once gets no nth", () => {
    const requests = new Map<number, ReplayedRequest>([
      [1, authorise("ORD-2")],
      [2, authorise("ORD-2")],
      [3, authorise("ORD-3")],
    ]);
    const found = [
      differs(2, "authorise", "respon.result_info", "D0005:Do not honor", "0000:Success"),
      differs(3, "authorise", "respon.result_info", "D0051:Insufficient funds", "0000:Success"),
    ];
    const { scenario } = suggest(found, requests, "default");
    expect(scenario.rules.map((r) => r.when)).toEqual([
      { operation: "authorise", order_no: "ORD-2", nth: 2 },
      { operation: "authorise", order_no: "ORD-3" },
    ]);
  });
});

describe("--suggest and differences that follow from another", () => {
  test("a query's difference on an order whose earlier refund a rule closes is a knock-on, not a Sandgate defect; another order's stays a defect", () => {
    const requests = new Map<number, ReplayedRequest>([
      [1, authorise("ORD-9")],
      [2, refund("ORD-9", "30.00")],
      [3, { operation: "retrievalTrans", fields: { order_no: "ORD-9,ORD-10" } }],
      [4, { operation: "retrievalTrans", fields: { order_no: "ORD-10" } }],
    ]);
    const found = [
      differs(2, "refund", "refund_orders[0].refund_status", "0", "1"),
      // the refused refund left the payment paid; Sandgate, having accepted it, says partly refunded
      differs(3, "retrievalTrans", "orders_list[0].payment_status", "3000", "4000"),
      differs(4, "retrievalTrans", "orders_list[0].website", "shop.example", ""),
    ];
    const { defects } = suggest(found, requests, "default");
    expect(defects).toEqual([
      expect.stringMatching(
        /^Knock-on of exchange #2 \(a rule above closes it\): retrievalTrans: Sandgate gives orders_list\[0\]\.payment_status = 4000; the gateway 3000 \(recording exchange #3\)\. Verify again/,
      ),
      expect.stringMatching(/^Sandgate defect: retrievalTrans: .*exchange #4/),
    ]);
  });
});
