// The commands of `sandgate ctl` as a table: each one's words, arguments and options, the operator
// client call (src/api/client.ts) it makes, and how its answer reads (a line for people, the JSON for
// scripts); the longer ones are in ctl-runs.ts. src/cli/ctl.ts turns the table into a command line,
// runs the chosen entry and exits.
import { Argument, Option } from "commander";
import { OPERATOR_CALLS } from "../api/operator-calls.js";
import { PORTAL_CALLS } from "../api/calls/portal-calls.js";
import { REQUEST_LOG_CAPACITY } from "../store/request-log.js";
import { Refused } from "./ctl-errors.js";
import {
  anyCall,
  callWord,
  coverage,
  DEFAULT_WAIT,
  durationMs,
  health,
  requestsCount,
  requestsHar,
  stateExport,
  stateImport,
  text,
  type CommandSpec,
} from "./ctl-runs.js";
import { counted } from "../base/words.js";
import type { CallAnswer } from "../api/client.js";

/** `ctl call --help`: every call of the table, as the router and the OpenAPI document have them. */
const CALL_LIST = OPERATOR_CALLS.map((c) => `  ${c.operationId.padEnd(22)} ${c.method.toUpperCase().padEnd(6)} ${c.path}`).join("\n");

const merchantOption = (what: string) => new Option("--merchant <id>", what);
/** on a shared sandbox what replaces every merchant's records (every team's) is said, never the default */
const allOption = (what: string) => new Option("--all", what);

/** What a clock command says: whose clock, where it stands now, what fell due. */
const clockSaid = (moved: CallAnswer<"getClock"> & { applied?: number }): string =>
  `${moved.merchant_id ? `merchant ${moved.merchant_id}'s clock` : "clock"}: ${moved.frozen ? "frozen at" : "now"} ${moved.now} (${Math.round(moved.offset_ms / 1000)}s ahead of real time)${moved.applied === undefined ? "" : `; ${counted(moved.applied, "due change")} applied`}`;

/** a clock call of the table as a command: its own arguments, and --merchant for one merchant's clock */
const clockWord = (words: string, summary: string, call: "setClock" | "freezeClock" | "unfreezeClock", args: [Argument, `body.${string}`][] = []) =>
  callWord({
    words,
    summary,
    call,
    args,
    options: [[merchantOption("this merchant's clock only; every other merchant's stays"), "body.merchant_id"]],
    body: {},
    said: clockSaid,
  });

export const COMMANDS: readonly CommandSpec[] = [
  {
    words: "health",
    summary: "check that the sandbox answers; with --wait, wait until it does (exit 1 when the time runs out)",
    options: [new Option("--wait [duration]", `keep asking for this long (default ${DEFAULT_WAIT})`)],
    run: health,
  },
  {
    words: "scenario use",
    summary: "set the global scenario, or bind one merchant to a scenario",
    args: [new Argument("<name>", "a scenario's name (scenario list)")],
    options: [merchantOption("bind this merchant only (a CI job isolates itself by merchant_id)")],
    run: async ({ client }, [name], flags) => {
      const merchant = text(flags, "merchant");
      if (merchant === undefined) {
        const done = await client.setScenario(name!);
        return { json: done, text: `global scenario: ${done.global}` };
      }
      const done = await client.bindScenario(merchant, name!);
      return { json: done, text: `merchant ${done.merchant_id} uses scenario ${done.scenario}` };
    },
  },
  callWord({
    words: "scenario unbind",
    summary: "remove a merchant's binding: it follows the global scenario again",
    call: "unbindScenario",
    args: [[new Argument("<merchant_id>", "the merchant bound to a scenario"), "params.merchantId"]],
    said: (done) => `merchant ${done.merchant_id} follows the global scenario (${done.scenario})`,
  }),
  callWord({
    words: "scenario list",
    summary: "the scenarios, the global one and the merchants' bindings",
    call: "listScenarios",
    said: (list) =>
      [
        ...list.scenarios.map((s) => `${s.name === list.global ? "*" : " "} ${s.name.padEnd(24)} ${s.description}`),
        `global: ${list.global}`,
        ...Object.entries(list.bindings).map(([merchant, name]) => `merchant ${merchant}: ${name}`),
        ...list.errors.map((error) => `error: ${error}`),
      ].join("\n"),
  }),
  callWord({
    words: "complete",
    summary: "finish a payment waiting at a payer page (3-D Secure, hosted checkout, APM) as its payer would",
    call: "completePayment",
    args: [
      [new Argument("<transaction_id>", "the pending payment"), "params.transaction_id"],
      [
        new Argument(
          "<outcome>",
          "what the payer does, by page (3-D Secure, APM, hosted checkout): paid, failed, cancelled; at an APM page also expired, pending; at the hosted checkout also review, threeds, pending and any decline by name (insufficient_funds, expired_card, ...). A wrong one is refused with the page's choices and the result_info each gives",
        ),
        "body.outcome",
      ],
    ],
    said: (done) =>
      `payment ${done.transaction_id}: order_status ${done.order_status}, payment_status ${done.payment_status} (${done.result_info})${done.stage ? `; it now waits at its ${done.stage} page` : ""}`,
  }),
  ...portalCommands(),
  callWord({
    words: "payout complete",
    summary: "complete a PENDING payout now (its notification goes out)",
    call: "completePayout",
    args: [[new Argument("<transaction_id>", "the payout (its transaction_id)"), "params.transaction_id"]],
    body: {},
    shown: (done) => done.payout,
    said: ({ payout }, { transaction_id }) => `payout ${transaction_id}: ${String(payout.status)}`,
  }),
  callWord({
    words: "payout fail",
    summary: "fail a PENDING payout now, as the bank would bounce it",
    call: "failPayout",
    args: [[new Argument("<transaction_id>", "the payout (its transaction_id)"), "params.transaction_id"]],
    options: [
      [new Option("--type <failure_type>", "a failure type of the catalogue (default UNKNOWN): ACCOUNT_CLOSED, NO_ACCOUNT, ..."), "body.failure_type"],
      [new Option("--reason <text>", "default: the catalogue's text for the type"), "body.failure_reason"],
    ],
    body: {},
    shown: (done) => done.payout,
    said: ({ payout }, { transaction_id }) => `payout ${transaction_id}: ${String(payout.status)} ${String(payout.failure_type ?? "")}`.trimEnd(),
  }),
  callWord({
    words: "subscription charge",
    summary: "make an active subscription's next deduction now",
    call: "chargeSubscription",
    args: [[new Argument("<recurring_id>", "the subscription"), "params.recurring_id"]],
    body: {},
    shown: (done) => done.subscription,
    said: ({ subscription: sub }) => `subscription ${sub.recurring_id}: ${counted(Number(sub.deductions), "charge")}, ${sub.state}`,
  }),
  callWord({
    words: "notifications trigger",
    summary: "send a merchant's receiver a notification made up now, signed as Sandgate signs every one",
    call: "triggerNotification",
    options: [
      [merchantOption("whose notification (its key signs it)").makeOptionMandatory(), "body.merchant_id"],
      [new Option("--to <url>", "the receiver (its notify_url)").makeOptionMandatory(), "body.url"],
      [new Option("--event <name>", "the event (default test.notification)"), "body.event"],
    ],
    said: ({ notification: n }) => `notification ${n.notification_id} (${n.event}) to ${n.url}: ${n.state}`,
  }),
  callWord({
    words: "notifications resend",
    summary: "send a notification again (a new attempt, signed with its own sent_at)",
    call: "resendNotification",
    args: [[new Argument("<notification_id>", "the notification"), "params.id"]],
    body: {},
    shown: (done) => done.notification,
    said: ({ notification: n }) => `notification ${n.notification_id}: ${n.state} after ${counted(n.attempts.length, "attempt")}`,
  }),
  callWord({
    words: "refund settle",
    summary: "settle an accepted refund now",
    call: "settleRefund",
    args: [
      [new Argument("<refund_reference_id>", "the refund (its refund_reference_id)"), "params.ref"],
      [new Argument("<result>", "how it ends").choices(["processed", "failed"]), "body.result"],
    ],
    shown: (done) => done.refund,
    said: ({ refund }) => `refund ${refund.refund_reference_id} of ${refund.transaction_id}: ${refund.state}`,
  }),
  {
    words: "clock advance",
    summary: "move the sandbox clock (or one merchant's) forward and apply what fell due (refund settlements, payouts, subscription charges)",
    args: [new Argument("<duration>", "90s, 15m, 2h, 3d, 1w, or seconds")],
    options: [merchantOption("this merchant's clock only (a CI job isolates its time by merchant_id); every other merchant's stays")],
    run: async ({ client }, [by], flags) => {
      durationMs(by!, "clock advance");
      const merchant = text(flags, "merchant");
      const moved = await client.advanceClock(by!, merchant ? { merchant } : {});
      return { json: moved, text: clockSaid(moved) };
    },
  },
  callWord({
    words: "clock show",
    summary: "the sandbox clock, or one merchant's: its time, how far it runs ahead of real time, whether it is frozen",
    call: "getClock",
    options: [[merchantOption("this merchant's own clock"), "query.merchant_id"]],
    said: clockSaid,
  }),
  clockWord(
    "clock set",
    "set the clock (the sandbox's, or one merchant's) to a later moment and apply what fell due; an earlier moment is refused",
    "setClock",
    [[new Argument("<moment>", "ISO 8601 with its zone: 2027-01-01T00:00:00Z"), "body.to"]],
  ),
  clockWord(
    "clock freeze",
    "stop the clock (the sandbox's, or one merchant's): time stands still until unfrozen; advance and set still move it",
    "freezeClock",
  ),
  clockWord("clock unfreeze", "let a frozen clock run on from where it stood", "unfreezeClock"),
  callWord({
    words: "notifications deliver",
    summary: "attempt every notification due now and wait for the answers",
    call: "deliverNotifications",
    body: {},
    said: (d) => `${counted(d.attempts, "attempt")}; notifications: ${d.delivered} delivered, ${d.pending} pending, ${d.failed} failed, ${d.dropped} dropped`,
  }),
  {
    words: "coverage",
    summary: "the rules of the scenarios in use that answered, and the outcomes never produced; --fail-under exits 1 under a share of rules",
    options: [
      merchantOption("one merchant's coverage (default: every merchant's)"),
      new Option("--operations <list>", 'count the rules of these operations only (authorise,capture,refund), or "used": those the requests used'),
      new Option("--scenario <name>", "count that scenario's rules only, answered or not (default: the scenarios that answered)"),
      new Option("--fail-under <percent>", "exit 1 when fewer than this percent of the rules counted answered"),
    ],
    run: coverage,
  },
  {
    words: "requests",
    summary: "the request log: written as a HAR 1.2 file (--har), or counted (--count), a CI assertion with --expect or --at-least",
    options: [
      new Option("--har <file>", "write the requests as a HAR 1.2 file (-: on standard output)"),
      new Option("--count", "count the requests (with the filters below)"),
      merchantOption("one merchant's requests"),
      new Option("--operation <name>", "one operation's (authorise, capture, refund, ...)"),
      new Option("--order <order_no>", "one order's (the requests that name it at the top level: authorise, checkout, a query)"),
      new Option("--status <http>", "an HTTP status (403) or a class (4xx)"),
      new Option("--expect <n>", "with --count: exit 1 unless exactly n were found"),
      new Option("--at-least <n>", "with --count: exit 1 unless at least n were found"),
      new Option("--limit <n>", `the most recent n requests (default and most: ${REQUEST_LOG_CAPACITY}, what the log keeps)`),
    ],
    run: (ctx, args, flags) => (flags.count === true ? requestsCount(ctx, flags) : requestsHar(ctx, args, flags)),
  },
  {
    words: "merchant key",
    summary: "print a merchant's secret key, provisioning the merchant if Sandgate does not know it yet (--rotate: a new one)",
    args: [new Argument("<merchant_id>", "the merchant (a fixture's, one provisioned by use, or a new one)")],
    options: [new Option("--rotate", "give the merchant a new random key and print it: the old one is refused at once (--merchant-keys random)")],
    run: async ({ client }, [merchantId], flags) => {
      const merchant =
        flags.rotate === true
          ? ((await client.call("rotateMerchantKey", { params: { merchant_id: merchantId! }, body: {} })) as { merchant: { secret_key: string } }).merchant
          : await client.merchant(merchantId!);
      return { json: merchant, text: merchant.secret_key };
    },
  },
  {
    words: "state export",
    summary: "write the state (or one merchant's) to a file, to move it or keep it (NDJSON, versioned)",
    options: [new Option("--out <file>", "the file to write").makeOptionMandatory(), merchantOption("one merchant's records only")],
    run: stateExport,
  },
  {
    words: "state import",
    summary: "replace the one merchant a file state export wrote holds, or with --all a file of every merchant; a refused file changes nothing",
    args: [new Argument("<file>", "a file state export wrote")],
    options: [allOption("the file holds every merchant: replace every merchant's records and the clock")],
    run: stateImport,
  },
  callWord({
    words: "snapshot save",
    summary: "keep the state (or one merchant's) under a name, to put it back later",
    call: "saveSnapshot",
    args: [[new Argument("<name>", "1 to 64 letters, digits, _ . -"), "params.name"]],
    options: [[merchantOption("keep this merchant's records only"), "body.merchant_id"]],
    body: {},
    shown: (done) => done.snapshot,
    said: ({ snapshot: s }) => `snapshot ${s.name}: ${s.records} records of ${s.merchant === null ? "every merchant" : `merchant ${s.merchant}`}`,
  }),
  callWord({
    words: "snapshot restore",
    summary: "put back the one merchant a snapshot holds, or with --all a snapshot of every merchant",
    call: "restoreSnapshot",
    args: [[new Argument("<name>", "a snapshot's name (snapshot list)"), "params.name"]],
    options: [[allOption("the snapshot holds every merchant: replace every merchant's records and the clock"), "body.all"]],
    body: {},
    shown: (done) => done.snapshot,
    said: ({ snapshot: s }) => `restored snapshot ${s.name} (${s.records} records, saved at ${s.saved_at})`,
  }),
  callWord({
    words: "snapshot list",
    summary: "the snapshots kept, newest first",
    call: "listSnapshots",
    shown: (done) => done.snapshots,
    said: ({ snapshots }) =>
      snapshots.map((s) => `${s.name}  ${s.saved_at}  ${s.records} records  ${s.merchant ?? "every merchant"}`).join("\n") || "no snapshots",
  }),
  callWord({
    words: "snapshot delete",
    summary: "forget a snapshot",
    call: "deleteSnapshot",
    args: [[new Argument("<name>", "a snapshot's name"), "params.name"]],
    said: (done) => `deleted snapshot ${done.deleted}`,
  }),
  {
    words: "call",
    summary: "any operator call by its operationId (call --help lists them), its answer as JSON",
    args: [
      new Argument("<operationId>", `one of the operator API's calls:\n${CALL_LIST}\n`),
      new Argument("[name=value...]", "a path parameter of the call (e.g. transaction_id=...), or else a query parameter"),
    ],
    options: [new Option("--body <json>", "the call's JSON body")],
    run: anyCall,
  },
  {
    words: "reset",
    summary: "back to the fixtures: one merchant's records, or with --all everything (coverage stays)",
    options: [merchantOption("reset this merchant only"), allOption("reset every merchant (on a shared sandbox: every team's)")],
    run: async ({ client }, _args, flags) => {
      const merchant = text(flags, "merchant");
      // a shared sandbox is every team's: resetting all of it is said, never the default
      if ((merchant === undefined) === (flags.all !== true))
        throw new Refused("say what to reset: --merchant <id> for one merchant, or --all for every merchant");
      const done = await client.reset(merchant);
      return { json: done, text: done.reset === "all" ? "reset: everything is back to the fixtures" : `reset: merchant ${done.reset} is back to the fixtures` };
    },
  },
];

/**
 * `payment capture|cancel|refund|review`: the merchant portal's actions (the table's PORTAL_CALLS),
 * each the merchant's own gateway request; a refusal is the gateway's message.
 */
function portalCommands(): CommandSpec[] {
  const said = ({ transaction: t }: { transaction: Record<string, string> }) =>
    `payment ${t.transaction_id}: ${t.state} (captured ${t.captured_amount}, refunded ${t.refunded_amount} ${t.currency})`;
  const id: [Argument, "params.transaction_id"] = [new Argument("<transaction_id>", "the payment"), "params.transaction_id"];
  return [
    callWord({
      words: "payment capture",
      summary: "capture an authorised payment as its merchant would (all of it, or --amount)",
      call: PORTAL_CALLS.capture,
      args: [id],
      options: [[new Option("--amount <amount>", "what to capture (default: all of it)"), "body.amount"]],
      body: {},
      said,
    }),
    callWord({
      words: "payment cancel",
      summary: "cancel a payment before capture as its merchant would",
      call: PORTAL_CALLS.cancel,
      args: [id],
      body: {},
      said,
    }),
    callWord({
      words: "payment refund",
      summary: "refund a captured payment as its merchant would (all that is left, or --amount)",
      call: PORTAL_CALLS.refund,
      args: [id],
      options: [
        [new Option("--amount <amount>", "what to refund (default: all that is left)"), "body.amount"],
        [new Option("--reason <text>", "the refund's reason"), "body.reason"],
      ],
      body: {},
      said,
    }),
    callWord({
      words: "payment review",
      summary: "approve or reject a payment held for review as its merchant would",
      call: PORTAL_CALLS.review,
      args: [id, [new Argument("<decision>", "approve or reject").choices(["approve", "reject"]), "body.decision"]],
      said,
    }),
  ];
}

/** What the first word of a two-word command stands for, in `sandgate ctl --help`. */
export const GROUPS: Record<string, string> = {
  scenario: "the scenario in force: use, unbind, list",
  payment: "the merchant portal's actions on a payment: capture, cancel, refund, review",
  refund: "refunds: settle",
  merchant: "merchants: key",
  clock: "the sandbox clock, or one merchant's: show, advance, set, freeze, unfreeze",
  notifications: "the notification outbox: deliver, trigger, resend",
  payout: "payouts: complete, fail",
  subscription: "subscriptions: charge",
  state: "the state as a file: export, import",
  snapshot: "QA snapshots of the state: save, restore, list, delete",
};
