// Coverage scoped to what a shop uses: the rules of some operations only (a card-only shop never
// sends a payout), one scenario's rules, the operations its requests used; the gate's percentage
// over that scope; each answer counted under the scenario that gave it. docs/scenarios.md's scoped
// block is run as written.
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { runSandgate } from "../scripts/sandgate-process.js";
import { ANY_SIGNATURE, directPayment, nextOrderNo, parseXml, textOf } from "./helpers.js";
import { blockHolding } from "./docs-helpers.js";
import { sandboxWithReceiver } from "./receiver.js";

const live = sandboxWithReceiver("coverage-scope");

/** the shipped default scenario's rules, read from its file: those for these operations */
const defaultRules = JSON.parse(readFileSync(new URL("../scenarios/default.json", import.meta.url), "utf8")) as {
  rules: { id: string; when?: { operation?: string | string[] } }[];
};
const rulesOf = (ops: string[]) =>
  defaultRules.rules.filter((r) => {
    const named = r.when?.operation;
    return named === undefined || [named].flat().some((o) => ops.includes(o));
  });

/** A card shop's job: a payment approved, one declined, a capture and a refund that settles later (.17). */
async function cardJob(merchant: string, headers: Record<string, string> = {}) {
  const send = async (path: string, body: Record<string, unknown>) =>
    (
      await fetch(`${live.sandbox.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      })
    ).text();
  const paid = parseXml(
    await send("/v1/authorise", directPayment({ merchant_id: merchant, account_id: "A1", order_no: nextOrderNo(merchant), amount: "40.00" })),
  );
  await send("/v1/authorise", directPayment({ merchant_id: merchant, account_id: "A1", order_no: nextOrderNo(merchant), card: "4000000000000002" }));
  const order = { transaction_id: textOf(paid.transaction_id), order_no: textOf(paid.order_no), currency: "USD", amount: "40.00" };
  const envelope = { merchant_id: merchant, account_id: "A1", encryption_data: ANY_SIGNATURE };
  await send("/v1/capture", { ...envelope, capture_orders: [order] });
  await send("/v1/refund", { ...envelope, refund_orders: [{ ...order, refund_amount: "4.17" }] });
}

const answersOf = (report: { scenarios: { name: string; rules: { rule: string; answers: number }[] }[] }, scenario: string, rule: string) =>
  report.scenarios.find((s) => s.name === scenario)?.rules.find((r) => r.rule === rule)?.answers;

describe("coverage scoped to what a shop uses", () => {
  test("operations and scenario narrow what is counted; 'used' is the operations the merchant's requests used; an unknown one is refused", async () => {
    await cardJob("SCOPE-SHOP");
    const admin = live.sandbox.admin;
    const all = await admin.coverage("SCOPE-SHOP");
    expect(all.scope).toEqual({ operations: null, scenario: null });
    expect(all.scenarios.map((s) => s.name)).toEqual(["default"]);
    expect(all.scenarios[0]!.rules).toHaveLength(defaultRules.rules.length);

    const card = ["authorise", "capture", "refund"];
    const scoped = await admin.coverage("SCOPE-SHOP", { operations: card, scenario: "default" });
    expect(scoped.scope).toEqual({ operations: card, scenario: "default" });
    expect(scoped.scenarios[0]!.rules.map((r) => r.rule)).toEqual(rulesOf(card).map((r) => `default/${r.id}`));
    // in the scenario's order: the declined card, the approved one, the slow refund
    expect(scoped.scenarios[0]!.rules.filter((r) => r.answers > 0).map((r) => r.rule)).toEqual([
      "default/decline-generic",
      "default/visa-approve",
      "default/refund-slow",
    ]);
    expect(scoped.scenarios[0]!.rules.some((r) => r.rule.startsWith("default/payout-"))).toBe(false);
    expect(scoped.operations.map((o) => o.operation)).toEqual(["authorise", "capture", "refund"]);

    const used = await admin.coverage("SCOPE-SHOP", { operations: "used" });
    expect(used.scope.operations).toEqual(["authorise", "capture", "refund"]);

    // one scenario's rules, answered or not, though the shop never ran under it
    const other = await admin.coverage("SCOPE-SHOP", { scenario: "happy-path" });
    expect(other.scenarios.map((s) => [s.name, s.rules.every((r) => r.answers === 0)])).toEqual([["happy-path", true]]);

    await expect(admin.coverage("SCOPE-SHOP", { operations: ["authorise", "teleport"] })).rejects.toMatchObject({
      status: 400,
      error: "invalid_scope",
      message: expect.stringContaining("unknown: teleport"),
    });
    await expect(admin.coverage("SCOPE-SHOP", { scenario: "no-such" })).rejects.toMatchObject({ status: 400, error: "invalid_scope" });
  });

  test("each answer counts under the scenario that gave it: an inherited rule answered under 3ds is not credited to default", async () => {
    await cardJob("SCOPE-ATTR", { "x-sandbox-scenario": "3ds" });
    const report = await live.sandbox.admin.coverage("SCOPE-ATTR");
    expect(report.scenarios.map((s) => s.name)).toEqual(["3ds"]);
    expect(answersOf(report, "3ds", "default/refund-slow")).toBe(1);
    await cardJob("SCOPE-ATTR");
    const both = await live.sandbox.admin.coverage("SCOPE-ATTR");
    expect([answersOf(both, "3ds", "default/refund-slow"), answersOf(both, "default", "default/refund-slow")]).toEqual([1, 1]);

    // the Coverage tab says the same, scoped as asked; a scope it cannot apply is said, not ignored
    const tab = async (query: string) => (await fetch(`${live.sandbox.url}/__sandbox/ui/coverage?merchant_id=SCOPE-ATTR&${query}`)).text();
    const page = await tab("operations=authorise,refund");
    const section = (name: string) =>
      /<table[^>]*id="coverage-([^"]+)"[\s\S]*?<\/table>/g.exec(page.slice(page.indexOf(`Scenario <code>${name}</code>`)))?.[0] ?? "";
    expect(section("3ds")).toMatch(/default\/refund-slow<\/code><\/td><td>1</);
    expect(section("default")).toMatch(/default\/refund-slow<\/code><\/td><td>1</);
    expect(page).toContain('Counted: <strong id="coverage-scope">the rules of authorise, refund of the scenarios that answered</strong>');
    expect(page).not.toContain("default/payout-");
    expect(await tab("operations=teleport")).toMatch(
      /id="coverage-refused">operations must be &quot;used&quot; or a comma list of .*unknown: teleport; every rule is counted\./,
    );
  });

  test("docs/scenarios.md's scoped lines, as written: the curl answers the scope; the gate is over what was counted", async () => {
    await cardJob("SHOP-CI");
    const block = blockHolding("docs/scenarios.md", ["sh"], "--operations used");
    const lines = block.text.split("\n").filter(Boolean);
    expect(lines).toHaveLength(3);
    const url = /^curl -s "\$URL([^"]+)"$/.exec(lines[0]!)![1]!;
    const scoped = (await (await fetch(`${live.sandbox.url}${url}`)).json()) as { scope: unknown; scenarios: { rules: { answers: number }[] }[] };
    expect(scoped.scope).toEqual({ operations: ["authorise", "capture", "refund"], scenario: "default" });
    const total = rulesOf(["authorise", "capture", "refund"]).length;
    expect(scoped.scenarios[0]!.rules).toHaveLength(total);

    for (const line of lines.slice(1)) {
      const args = line.replace(/^npx sandgate /, "").split(/\s+/);
      const run = await runSandgate(args, { env: { SANDGATE_URL: live.sandbox.url, ADMIN_TOKEN: "" } });
      // three rules of the card operations answered: far under 80 %, the gate fails the job
      expect(run.stdout).toMatch(
        new RegExp(`^Coverage of merchant SHOP-CI: 3 of ${total} rules answered \\(\\d+(\\.\\d)?%\\) \\(counted: the rules of authorise, capture, refund`),
      );
      expect(run.stdout).toContain("FAILED: --fail-under 80");
      expect(run.code).toBe(1);
    }
  });
});
