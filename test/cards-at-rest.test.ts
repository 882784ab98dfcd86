// No full card number at rest: cards on file keep their first six and last four digits (and a
// fingerprint when a scenario names the number), and scenario rules decide their charges as they
// decide a payment by card number. Tokenised payments, subscriptions and rules on the card run
// against a real process (with --data in "one process"; on Redis in the replicas projects), then
// every byte it wrote or sent is searched for the card numbers: its files, Redis, its output, the
// HAR export, the dashboard and the notifications.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { spawnSandgate, type SandgateProcess } from "../scripts/sandgate-process.js";
import { directPayment, parseXml, textOf } from "./helpers.js";
import { REPLICA_MODE, freshPrefix, redisClient, redisDump, redisFlags } from "./replica-helpers.js";
import { scenarioDir } from "./scenario-helpers.js";

const ON_FILE = `name: on-file
description: rules on the card, for cards on file
extends: default
rules:
  - { id: named-value, when: { card: "4000000000009995" }, then: { outcome: insufficient_funds } }
  - { id: named-in, when: { card: { in: ["4000000000000002"] } }, then: { outcome: do_not_honor } }
  - { id: first-six-last-four, when: { operation: authorise, card: { prefix: "555555", suffix: "4444" } }, then: { outcome: risk_review } }
  - { id: last-four, when: { operation: authorise, card: { suffix: "1881" } }, then: { outcome: invalid_cvc } }
  - { id: seven-digit-prefix, when: { operation: authorise, card: { prefix: "4242424" } }, then: { outcome: lost_card } }
`;

/** Luhn-valid numbers: named by a rule (value, in), matched by first six and last four, by last four, by a longer prefix, and by nothing */
const CARDS = ["4000000000009995", "4000000000000002", "5555555555554444", "4012888888881881", "4242424242424242", "4000056655665556"];
const MERCHANT = "MCARDS";

const running: SandgateProcess[] = [];
afterAll(() => running.forEach((p) => p.child.kill("SIGKILL")));

async function start(args: string[], env: Record<string, string> = {}): Promise<{ url: string; proc: SandgateProcess }> {
  const proc = spawnSandgate(["--port", "0", "--host", "127.0.0.1", "--seed", "cards", ...args], { env: { LOG_LEVEL: "debug", ...env } });
  running.push(proc);
  return { url: await proc.url, proc };
}

async function stop(proc: SandgateProcess): Promise<void> {
  proc.child.kill("SIGTERM");
  await proc.exited;
}

async function pay(
  url: string,
  fields: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ result: string; token: string; transaction: string; recurring: string }> {
  const res = await fetch(`${url}/v1/authorise`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(directPayment({ merchant_id: MERCHANT, ...fields })),
  });
  const xml = parseXml(await res.text());
  return { result: textOf(xml.result_info), token: textOf(xml.token_id), transaction: textOf(xml.transaction_id), recurring: textOf(xml.recurring_id) };
}

/** A receiver for the notifications: every body it was sent. */
async function receiver(): Promise<{ url: string; bodies: string[]; server: Server }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      bodies.push(body);
      res.end("OK");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`, bodies, server };
}

const masked = (card: string) => `${card.slice(0, 6)}${"*".repeat(card.length - 10)}${card.slice(-4)}`;

describe(`cards on file ${REPLICA_MODE ? "on Redis" : "with --data"}`, () => {
  test("charges by token and by subscription decide as by card number, and no full number is anywhere Sandgate wrote or sent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-cards-"));
    const prefix = freshPrefix();
    const where = REPLICA_MODE ? redisFlags(prefix) : ["--data", join(dir, "state.json")];
    const scenarios = scenarioDir({ "on-file.yaml": ON_FILE });
    const hook = await receiver();
    // two processes on Redis: cards kept on file by one are charged by the other
    const first = await start([...where, "--scenarios", scenarios]);
    const second = REPLICA_MODE ? await start([...where, "--scenarios", scenarios]) : first;
    try {
      const bound = await fetch(`${first.url}/__sandbox/scenarios/bindings/${MERCHANT}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "on-file" }),
      });
      expect(bound.status).toBe(200);

      for (const card of CARDS) {
        const direct = await pay(first.url, { card });
        const kept = await pay(first.url, { card, token_flag: "1", notify_url: hook.url }, { "X-Sandbox-Outcome": "approved" });
        expect(kept.token, card).toMatch(/^tok_/);
        const byToken = await pay(second.url, {
          card: undefined,
          expiration_month: undefined,
          expiration_year: undefined,
          token_id: kept.token,
          notify_url: hook.url,
        });
        // a prefix longer than the six digits kept does not see a card on file (README, scenarios)
        if (card === "4242424242424242") {
          expect(direct.result).toMatch(/lost/i);
          expect(byToken.result).toBe("0000:Success");
        } else expect([card, byToken.result]).toEqual([card, direct.result]);
      }
      // the rules did decide: each card on file got its own outcome (five rules, one card matching none)
      const outcomes = await Promise.all(CARDS.map(async (card) => (await pay(first.url, { card })).result));
      expect(new Set(outcomes).size).toBe(6);

      // a subscription's deductions are decided by the rules against its card on file
      const sub = await pay(first.url, { card: CARDS[0], subscription: { interval: "day" }, notify_url: hook.url }, { "X-Sandbox-Outcome": "approved" });
      expect(sub.recurring).not.toBe("");
      const advanced = await fetch(`${second.url}/__sandbox/clock`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ advance: "1d" }),
      });
      expect(advanced.status).toBe(200);
      const listed = (await (await fetch(`${second.url}/__sandbox/transactions?merchant_id=${MERCHANT}`)).json()) as {
        transactions: { recurring_id?: string; transaction_id: string; result: { info: string } | string }[];
      };
      const deduction = listed.transactions.find((t) => t.recurring_id === sub.recurring && t.transaction_id !== sub.transaction);
      expect(JSON.stringify(deduction)).toMatch(/insufficient/i);

      // everything a tester or the merchant can be shown, and everything sent
      await fetch(`${first.url}/__sandbox/notifications/deliver`, { method: "POST" });
      const shown: string[] = [];
      for (const replica of new Set([first, second])) {
        for (const path of [
          "/__sandbox/requests.har",
          "/__sandbox/requests",
          `/__sandbox/transactions?merchant_id=${MERCHANT}`,
          `/__sandbox/ui/transactions?merchant_id=${MERCHANT}`,
          "/__sandbox/ui/subscriptions",
          "/__sandbox/notifications",
        ]) {
          shown.push(`${path}\n${await (await fetch(`${replica.url}${path}`)).text()}`);
        }
      }
      for (const replica of new Set([first, second])) await stop(replica.proc);
      const written = [
        ...shown,
        ...hook.bodies,
        first.proc.stdout(),
        first.proc.stderr(),
        second.proc.stdout(),
        second.proc.stderr(),
        ...readdirSync(dir).map((f) => `${f}\n${readFileSync(join(dir, f), "utf8")}`),
      ].join("\n");
      const redis = REPLICA_MODE ? await redisDump(prefix) : "";
      if (REPLICA_MODE) expect(redis, "Redis holds the cards on file, as kept").toContain(masked(CARDS[0]!));
      expect(hook.bodies.length).toBeGreaterThan(0);
      for (const card of CARDS) {
        expect(written, "the search sees the cards as they are kept").toContain(masked(card));
        expect(written.includes(card), `${card} was written`).toBe(false);
        expect(redis.includes(card), `${card} is in Redis`).toBe(false);
      }
    } finally {
      hook.server.close();
    }
  }, 60_000);

  test("card numbers and codes in every shape and in free text: none in any byte Sandgate keeps or serves", async () => {
    const CARD = "5105105105105100";
    const CODE = "8642";
    const dir = mkdtempSync(join(tmpdir(), "sandgate-shapes-"));
    const prefix = freshPrefix();
    const where = REPLICA_MODE ? redisFlags(prefix) : ["--data", join(dir, "state.json")];
    const hook = await receiver();
    const { url, proc } = await start(where);
    try {
      const base = {
        merchant_id: MERCHANT,
        account_id: "A1",
        order_no: "SHAPES-1",
        currency: "USD",
        amount: "10.00",
        first_name: "Jane",
        last_name: "Doe",
        expiration_month: "12",
        expiration_year: "2030",
        shopper_email: "jane@example.com",
        encryption_data: "a".repeat(64),
      };
      const form = new URLSearchParams(base as Record<string, string>).toString();
      const post = (body: string, type: string) =>
        fetch(`${url}/v1/authorise`, { method: "POST", headers: { "content-type": type }, body }).then((r) => r.status);
      // refused (a card is a text), but logged: the log once kept these as sent
      const FORM = "application/x-www-form-urlencoded";
      expect(await post(`${form}&card[]=${CARD}&security_code[]=${CODE}`, FORM)).toBe(400);
      expect(await post(`${form}&card[number]=${CARD}&security_code[x]=${CODE}`, FORM)).toBe(400);
      expect(await post(`${form}&card%5B%5D=${CARD}&cvv%5B0%5D=${CODE}`, FORM)).toBe(400);
      expect(await post(JSON.stringify({ ...base, card: [CARD], security_code: { v: CODE } }), "application/json")).toBe(400);
      expect(await post(JSON.stringify({ ...base, card: { number: { pan: Number(CARD) } }, security_code: [[Number(CODE)]] }), "application/json")).toBe(400);
      // accepted, with the number typed into free-text fields, spaced and dashed
      const note = `call me, card ${CARD.replace(/(\d{4})(?=\d)/g, "$1 ")} thanks`;
      const custom = CARD.replace(/(\d{4})(?=\d)/g, "$1-");
      const accepted = await fetch(`${url}/v1/authorise`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...base, order_no: "SHAPES-2", card: "4242424242424242", security_code: CODE, note, custom, notify_url: hook.url }),
      });
      expect(accepted.status).toBe(200);
      await fetch(`${url}/__sandbox/notifications/deliver`, { method: "POST" });
      const shown: string[] = [];
      for (const path of [
        "/__sandbox/requests.har",
        "/__sandbox/requests",
        `/__sandbox/transactions?merchant_id=${MERCHANT}`,
        `/__sandbox/ui/transactions?merchant_id=${MERCHANT}`,
        "/__sandbox/ui/requests",
        "/__sandbox/notifications",
      ]) {
        shown.push(`${path}\n${await (await fetch(`${url}${path}`)).text()}`);
      }
      const listed = (await (await fetch(`${url}/__sandbox/transactions?merchant_id=${MERCHANT}`)).json()) as { transactions: { transaction_id: string }[] };
      for (const t of listed.transactions) shown.push(await (await fetch(`${url}/__sandbox/ui/transactions/${t.transaction_id}`)).text());
      await stop(proc);
      const written = [
        ...shown,
        ...hook.bodies,
        proc.stdout(),
        proc.stderr(),
        ...readdirSync(dir).map((f) => `${f}\n${readFileSync(join(dir, f), "utf8")}`),
        REPLICA_MODE ? await redisDump(prefix) : "",
      ].join("\n");
      expect(hook.bodies.length).toBeGreaterThan(0);
      expect(written, "the search sees the numbers as masked").toContain(masked(CARD));
      for (const leak of [CARD, note, custom, CARD.replace(/(\d{4})(?=\d)/g, "$1 ")]) expect(written.includes(leak), `${leak} was kept`).toBe(false);
      for (const leak of [`"${CODE}"`, `=${CODE}`, `>${CODE}<`, `:${CODE}`, `[${CODE}]`])
        expect(written.includes(leak), `the code as ${leak} was kept`).toBe(false);
    } finally {
      hook.server.close();
    }
  }, 60_000);

  test.runIf(REPLICA_MODE)(
    "a merchant an older Sandgate left in Redis with full numbers on file: loaded without them, rewritten at its next turn; the named one still decides",
    async () => {
      const prefix = freshPrefix();
      const scenarios = scenarioDir({ "on-file.yaml": ON_FILE });
      const first = await start([...redisFlags(prefix), "--scenarios", scenarios]);
      const named = await pay(first.url, { card: CARDS[1], token_flag: "1" }, { "X-Sandbox-Outcome": "approved" });
      const unnamed = await pay(first.url, { card: CARDS[5], token_flag: "1" }, { "X-Sandbox-Outcome": "approved" });
      await stop(first.proc);
      const tokens = `${prefix}m:{${MERCHANT}}:c:tokens`;
      const client = await redisClient();
      try {
        // as an older Sandgate kept them: the full number, no fingerprint
        for (const [token, card] of [
          [named.token, CARDS[1]],
          [unnamed.token, CARDS[5]],
        ] as const) {
          const record = JSON.parse((await client.hget(tokens, token))!) as Record<string, unknown>;
          delete record.card_fingerprint;
          await client.hset(tokens, token, JSON.stringify({ ...record, card_number: card }));
        }
        const again = await start([...redisFlags(prefix), "--scenarios", scenarios]);
        await fetch(`${again.url}/__sandbox/scenarios/bindings/${MERCHANT}`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "on-file" }),
        });
        const cardless = { card: undefined, expiration_month: undefined, expiration_year: undefined };
        expect((await pay(again.url, { ...cardless, token_id: named.token })).result).toMatch(/honou?r/i);
        expect((await pay(again.url, { ...cardless, token_id: unnamed.token })).result).toBe("0000:Success");
        const kept = Object.values(await client.hgetall(tokens)).join("\n");
        expect(kept).toContain(masked(CARDS[1]!));
        for (const card of [CARDS[1]!, CARDS[5]!]) expect(kept.includes(card), `${card} still in Redis`).toBe(false);
        await stop(again.proc);
      } finally {
        client.disconnect();
      }
    },
    60_000,
  );

  test.runIf(!REPLICA_MODE)(
    "a state file from before, with full numbers on file, is rewritten without them at start; the named one still decides",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "sandgate-cards-old-"));
      const file = join(dir, "state.json");
      const scenarios = scenarioDir({ "on-file.yaml": ON_FILE });
      const first = await start(["--data", file, "--scenarios", scenarios]);
      const named = await pay(first.url, { card: CARDS[1], token_flag: "1" }, { "X-Sandbox-Outcome": "approved" });
      const unnamed = await pay(first.url, { card: CARDS[5], token_flag: "1" }, { "X-Sandbox-Outcome": "approved" });
      await stop(first.proc);
      // as an older Sandgate kept them: the full number, no fingerprint
      const state = JSON.parse(readFileSync(file, "utf8")) as { tokens: Record<string, unknown>[] };
      for (const [token, card] of [
        [named.token, CARDS[1]],
        [unnamed.token, CARDS[5]],
      ] as const) {
        const t = state.tokens.find((x) => x.token_id === token)!;
        delete t.card_fingerprint;
        t.card_number = card;
      }
      writeFileSync(file, JSON.stringify(state));

      const again = await start(["--data", file, "--scenarios", scenarios]);
      await fetch(`${again.url}/__sandbox/scenarios/bindings/${MERCHANT}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "on-file" }),
      });
      const onDisk = readdirSync(dir)
        .map((f) => readFileSync(join(dir, f), "utf8"))
        .join("\n");
      for (const card of [CARDS[1]!, CARDS[5]!]) expect(onDisk.includes(card), `${card} on disk after the start`).toBe(false);
      const cardless = { card: undefined, expiration_month: undefined, expiration_year: undefined };
      expect((await pay(again.url, { ...cardless, token_id: named.token })).result).toMatch(/honou?r/i);
      expect((await pay(again.url, { ...cardless, token_id: unnamed.token })).result).toBe("0000:Success");
      await stop(again.proc);
    },
    60_000,
  );
});
