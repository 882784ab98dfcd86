// What `sandgate ctl`'s longer commands do (the table of commands is ctl-commands.ts): health
// --wait, coverage --fail-under, the request log counted or written as HAR, the state as a file,
// and `call`, any operator call by its operationId; with the types every command shares.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseDuration } from "../admin/duration.js";
import { OPERATOR_CALLS, type OperatorCallId } from "../api/operator-calls.js";
import { nodeHttpTransport } from "./http-transport.js";
import { createAdminClient, type AdminClient, type CallAnswer } from "../api/client.js";
import { REQUEST_LOG_CAPACITY } from "../store/request-log.js";
import { ruleCoverage, scopeText, type CoverageReport } from "../scenarios/coverage.js";
import { failureOf, Refused } from "./ctl-errors.js";
import type { Argument, Option } from "commander";
import { counted } from "../base/words.js";

export interface Context {
  client: AdminClient;
  url: string;
  token: string | undefined;
  /** --timeout as given, for messages */
  timeout: string;
}

export type Flags = Record<string, string | boolean | undefined>;

export interface Answer {
  /** what --json prints: one document */
  json: unknown;
  /** what a person reads on stdout */
  text: string;
  /** set when the check failed (exit 1): one line for stderr */
  failed?: string;
}

export interface CommandSpec {
  /** the words after `sandgate ctl`, e.g. "scenario use" */
  words: string;
  summary: string;
  args?: Argument[];
  options?: Option[];
  run(ctx: Context, args: string[], flags: Flags): Promise<Answer>;
}

/** "90s", "2h", "3d" (or seconds) → ms; anything else is refused, naming where it was given. */
export function durationMs(value: string, where: string): number {
  const ms = parseDuration(value);
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0)
    throw new Refused(`${where}: "${value}" is not a duration above zero (90s, 15m, 2h, 3d, 1w, or seconds)`);
  return ms;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
export const text = (flags: Flags, name: string) => (typeof flags[name] === "string" ? (flags[name] as string) : undefined);

/** `health --wait`: a probe every POLL_MS, each given PROBE_MS (less near the end, MIN_PROBE_MS at least), until one answers or the time runs out. */
const POLL_MS = 250;
const PROBE_MS = 2_000;
const MIN_PROBE_MS = 200;
export const DEFAULT_WAIT = "30s";

export async function health(ctx: Context, _args: string[], flags: Flags): Promise<Answer> {
  const up = (h: Awaited<ReturnType<AdminClient["health"]>>, waitedMs?: number): Answer => ({
    json: waitedMs === undefined ? h : { ...h, waited_ms: waitedMs },
    text: `Sandgate at ${ctx.url} is up: scenario ${h.scenario}, signatures ${h.signature_mode}, time ${h.time}`,
  });
  if (flags.wait === undefined) return up(await ctx.client.health());
  const limit = durationMs(flags.wait === true ? DEFAULT_WAIT : String(flags.wait), "--wait");
  const started = Date.now();
  let last: unknown;
  let probeMs = PROBE_MS;
  for (;;) {
    probeMs = Math.max(MIN_PROBE_MS, Math.min(PROBE_MS, started + limit - Date.now()));
    try {
      return up(await createAdminClient(ctx.url, ctx.token, { timeoutMs: probeMs, transport: nodeHttpTransport }).health(), Date.now() - started);
    } catch (err) {
      last = err;
    }
    if (Date.now() - started >= limit) break;
    await sleep(Math.min(POLL_MS, started + limit - Date.now()));
  }
  const why = failureOf(last, ctx.url, ctx.token !== undefined, `${probeMs} ms`);
  const failed = `the Sandgate at ${ctx.url} did not answer within ${flags.wait === true ? DEFAULT_WAIT : flags.wait} (last: ${why.message})`;
  return { json: { status: "unreachable", waited_ms: Date.now() - started, error: why }, text: "", failed };
}

function coverageText(report: CoverageReport, rules: ReturnType<typeof ruleCoverage>): string {
  const whose = report.merchant_id ? `merchant ${report.merchant_id}` : "all merchants";
  const counted = report.scope.operations || report.scope.scenario ? ` (counted: ${scopeText(report.scope)})` : "";
  const lines = [`Coverage of ${whose}: ${rules.answered} of ${rules.total} rules answered (${rules.percent}%)${counted}`];
  if (!report.scenarios.length) lines.push("  no request was decided by a scenario");
  for (const s of report.scenarios) {
    const never = s.rules.filter((r) => !r.answers).map((r) => r.rule);
    lines.push(`  scenario ${s.name}: ${s.rules.length - never.length}/${s.rules.length} rules answered${never.length ? `; never: ${never.join(", ")}` : ""}`);
  }
  lines.push("Outcomes:");
  for (const o of report.operations) {
    const produced =
      Object.entries(o.produced)
        .map(([name, n]) => `${name} x${n}`)
        .join(", ") || "none";
    lines.push(`  ${o.operation}: produced ${produced}${o.never.length ? `; never: ${o.never.join(", ")}` : ""}`);
  }
  return lines.join("\n");
}

export async function coverage(ctx: Context, _args: string[], flags: Flags): Promise<Answer> {
  const given = text(flags, "failUnder");
  const threshold = given === undefined ? undefined : Number(given);
  if (threshold !== undefined && (given!.trim() === "" || !Number.isFinite(threshold) || threshold < 0 || threshold > 100)) {
    throw new Refused(`--fail-under must be a percentage from 0 to 100, got "${given}"`);
  }
  const operations = text(flags, "operations");
  const report = await ctx.client.coverage(text(flags, "merchant"), {
    ...(operations === undefined ? {} : { operations: operations === "used" ? "used" : operations.split(",") }),
    ...(text(flags, "scenario") === undefined ? {} : { scenario: text(flags, "scenario") }),
  });
  const rules = ruleCoverage(report);
  // compared unrounded: 2 of 3 rules is under 66.7; no rule in use is 0%
  const exact = rules.total ? (rules.answered * 100) / rules.total : 0;
  const passed = threshold === undefined ? null : exact >= threshold;
  const verdict = threshold === undefined ? "" : `\n${passed ? "passed" : "FAILED"}: --fail-under ${threshold}`;
  return {
    json: { ...report, rules, fail_under: threshold ?? null, passed },
    text: coverageText(report, rules) + verdict,
    ...(passed === false ? { failed: `coverage ${rules.percent}% (${rules.answered} of ${rules.total} rules) is under ${threshold}%` } : {}),
  };
}

/** A file a command writes (its folders created); one that cannot be written is a usage refusal naming it. */
function writeOut(file: string, body: string): void {
  try {
    mkdirSync(dirname(resolve(file)), { recursive: true });
    writeFileSync(file, body);
  } catch (err) {
    throw new Refused(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/**
 * `requests --count [--merchant --operation --order --status] [--expect n | --at-least n]`: how many
 * requests of the log match (WireMock's verify(n, …)); exit 1, saying what was found, when the
 * count is not what was expected.
 */
export async function requestsCount(ctx: Context, flags: Flags): Promise<Answer> {
  // commander names --at-least's value atLeast
  const whole = (key: string, flag: string) => {
    const value = text(flags, key);
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value)) throw new Refused(`${flag} must be a whole number, not ${JSON.stringify(value)}`);
    return Number(value);
  };
  const [exactly, atLeast] = [whole("expect", "--expect"), whole("atLeast", "--at-least")];
  if (exactly !== undefined && atLeast !== undefined) throw new Refused("--expect or --at-least, not both");
  const filter = {
    merchant_id: text(flags, "merchant"),
    operation: text(flags, "operation"),
    order_no: text(flags, "order"),
    http_status: text(flags, "status"),
    limit: REQUEST_LOG_CAPACITY,
  };
  const found = (await ctx.client.requests(filter)).length;
  const what = Object.entries({ merchant: filter.merchant_id, operation: filter.operation, order: filter.order_no, status: filter.http_status })
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  const said = `${counted(found, "request")}${what ? ` (${what})` : ""}`;
  const failed =
    exactly !== undefined && found !== exactly
      ? `expected ${exactly}, found ${said}`
      : atLeast !== undefined && found < atLeast
        ? `expected at least ${atLeast}, found ${said}`
        : undefined;
  return {
    json: { count: found, filter, ...(exactly !== undefined ? { expect: exactly } : {}), ...(atLeast !== undefined ? { at_least: atLeast } : {}) },
    text: said,
    ...(failed ? { failed } : {}),
  };
}

export async function requestsHar(ctx: Context, _args: string[], flags: Flags): Promise<Answer> {
  const file = text(flags, "har");
  if (file === undefined) throw new Refused("say what to do with the request log: --har <file> to write it, or --count to count it");
  const limit = Number(text(flags, "limit") ?? REQUEST_LOG_CAPACITY);
  if (!Number.isInteger(limit) || limit < 1 || limit > REQUEST_LOG_CAPACITY)
    throw new Refused(`--limit must be a whole number from 1 to ${REQUEST_LOG_CAPACITY}`);
  const har = (await ctx.client.requestsHar({ merchant_id: text(flags, "merchant"), limit })) as { log?: { entries?: unknown[] } };
  const entries = har.log?.entries?.length ?? 0;
  // `--har -`: the HAR itself on stdout (docker exec … sandgate ctl requests --har - > requests.har)
  if (file === "-") return { json: har, text: JSON.stringify(har, null, 2) };
  writeOut(file, `${JSON.stringify(har, null, 2)}\n`);
  return { json: { file: resolve(file), entries }, text: `wrote ${counted(entries, "request")} to ${file} (HAR 1.2)` };
}

/** `state export --out <file>`: the state file written where asked. */
export async function stateExport(ctx: Context, _args: string[], flags: Flags): Promise<Answer> {
  const file = text(flags, "out")!;
  const body = await ctx.client.exportState(text(flags, "merchant"));
  const records = Math.max(0, body.trimEnd().split("\n").length - 2);
  writeOut(file, body);
  return { json: { file: resolve(file), records }, text: `wrote ${counted(records, "record")} to ${file}` };
}

/** `state import <file> [--all]`: the state replaced by a file `state export` wrote (--all: one of every merchant). */
export async function stateImport(ctx: Context, [file]: string[], flags: Flags): Promise<Answer> {
  let body: string;
  try {
    body = readFileSync(file!, "utf8");
  } catch (err) {
    throw new Refused(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const done = await ctx.client.importState(body, { all: flags.all === true });
  const total = Object.values(done.records).reduce((a, n) => a + n, 0);
  return {
    json: done,
    text: `imported ${counted(total, "record")}${done.merchant === null ? ": the whole state was replaced" : ` of merchant ${done.merchant}`}`,
  };
}

/**
 * `ctl call <operationId> [name=value ...] [--body <json>]`: any call of the operator table
 * (api/operator-calls.ts), so a call the commands above do not name is one command away too. A
 * name=value fills the path parameter of that name, or else goes in the query; the answer is
 * printed as JSON.
 */
export async function anyCall({ client }: Context, args: string[], flags: Flags): Promise<Answer> {
  // commander hands the variadic name=value list over as one array, last
  const [id, ...pairs] = (args as (string | string[])[]).flat();
  const spec = OPERATOR_CALLS.find((c) => c.operationId === id);
  if (!spec) throw new Refused(`no operator call "${id}": ctl call --help lists them`);
  if (spec.open === "merchant key")
    throw new Refused(
      `${id} is sandgate listen's, signed with a merchant's key rather than ADMIN_TOKEN: sandgate listen --url <sandgate> --merchant <id> --key <key> (docs/notifications.md)`,
    );
  const inPath = new Set([...spec.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!));
  const params: Record<string, string> = {};
  const query: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new Refused(`"${pair}" is not name=value`);
    (inPath.has(pair.slice(0, at)) ? params : query)[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const missing = [...inPath].filter((name) => params[name] === undefined);
  if (missing.length) throw new Refused(`${id} (${spec.method.toUpperCase()} ${spec.path}) needs ${missing.map((m) => `${m}=<value>`).join(" ")}`);
  let body: unknown;
  const given = text(flags, "body");
  if (given !== undefined) {
    try {
      body = JSON.parse(given);
    } catch {
      throw new Refused(`--body is not JSON: ${given.slice(0, 80)}`);
    }
  }
  const answer = await client.call(id as OperatorCallId, { params, query, ...(body !== undefined ? { body } : {}) });
  return { json: answer, text: JSON.stringify(answer, null, 2) };
}

/** Where a command's argument or option goes in its call: a path parameter, a body field, or the query. */
type Target = `${"params" | "body" | "query"}.${string}`;

/**
 * A command that is one operator call, as data: its words, the call's operationId, where each
 * argument and option goes (in order), the body it always sends, what --json prints and the line a
 * person reads. callWord() turns it into a command; most of ctl is these.
 */
interface CallWord<Id extends OperatorCallId> {
  words: string;
  summary: string;
  call: Id;
  args?: [Argument, Target][];
  options?: [Option, Target][];
  /** sent under every given field: {} for a call that changes something and takes no field */
  body?: Record<string, unknown>;
  /** what --json prints (default: the answer) */
  shown?: (answer: CallAnswer<Id>) => unknown;
  /** the line on stdout; `given`: the arguments by their targets' names */
  said(answer: CallAnswer<Id>, given: Record<string, string>): string;
}

export function callWord<Id extends OperatorCallId>(word: CallWord<Id>): CommandSpec {
  return {
    words: word.words,
    summary: word.summary,
    args: (word.args ?? []).map(([a]) => a),
    options: (word.options ?? []).map(([o]) => o),
    run: async ({ client }, args, flags) => {
      const input = { params: {} as Record<string, string>, query: {} as Record<string, string>, body: word.body ? { ...word.body } : undefined } as {
        params: Record<string, string>;
        query: Record<string, string>;
        body?: Record<string, unknown>;
      };
      const given: Record<string, string> = {};
      const put = (target: Target, value: string | boolean) => {
        const [where, name] = target.split(".") as ["params" | "body" | "query", string];
        if (typeof value === "string") given[name] = value;
        if (where === "body") (input.body ??= {})[name] = value;
        else input[where][name] = String(value);
      };
      (word.args ?? []).forEach(([, target], i) => args[i] !== undefined && put(target, args[i]!));
      for (const [option, target] of word.options ?? []) {
        const value = flags[option.attributeName()];
        if (value !== undefined) put(target, value);
      }
      const answer = await client.call(word.call, input as never);
      return { json: word.shown ? word.shown(answer) : answer, text: word.said(answer, given) };
    },
  };
}
