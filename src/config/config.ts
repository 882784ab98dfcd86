// Every setting of Sandgate, its flag, its environment variable and its default: one table.
// `npx sandgate --help` prints it; README.md documents it; tests build configs from it.
import { defaultFixturesDir, defaultScenariosDir } from "../base/paths.js";
import { parseAllowList } from "./notify-allow-list.js";

export type SignatureMode = "lenient" | "strict";
/** --batch-signature: a batch request signed over merchant and account (the gateway's, inferred), or over its orders as well (Sandgate's). */
export type BatchSignature = "envelope" | "orders";
export type NotifySchedule = "fast" | "realistic";

export interface Config {
  port: number;
  host: string;
  scenario: string;
  scenarios: string;
  fixtures: string;
  data: string | undefined;
  seed: string | undefined;
  signatureMode: SignatureMode;
  /** what a batch request (capture, review, cancel, refund) is signed over: merchant and account, or its orders too */
  batchSignature: BatchSignature;
  strictMerchants: boolean;
  /** how a provisioned merchant's key is made: sk_test_<id> (id) or random */
  merchantKeys: "id" | "random";
  /** accounts a merchant may have (provisioned on first use); one more is refused */
  maxAccounts: number;
  baseUrl: string | undefined;
  adminToken: string | undefined;
  /** host names, besides loopback, IP addresses and --base-url's, under which a browser may reach /__sandbox */
  allowedHosts: string | undefined;
  /** hosts and ranges notifications and receiver checks may go to (any when unset) */
  notifyAllow: string | undefined;
  bodyLimit: string;
  /** a request's headers must arrive within this; its body within bodyTimeoutMs after them (408 otherwise) */
  headerTimeoutMs: number;
  bodyTimeoutMs: number;
  /** an idle keep-alive connection is closed after this */
  idleTimeoutMs: number;
  /** sockets open at once from one client address, and in all (0: no cap); past them 503 with Retry-After */
  maxConnectionsPerClient: number;
  maxConnections: number;
  logLevel: string;
  notifySchedule: NotifySchedule;
  keepRunning: boolean;
  coverageReport: string | undefined;
  redisUrl: string | undefined;
  redisPrefix: string;
  /** --redis-url names a seed node of a Redis Cluster */
  redisCluster: boolean;
  /** processes serving the port: "1", a number, or "auto" (one per core); more than one needs --redis-url */
  workers: string;
}

interface OptionSpec {
  key: keyof Config;
  flag: string;
  env: string;
  description: string;
  kind: "string" | "number" | "boolean";
  choices?: readonly string[];
  /** a string value must match this; `describes` says what is expected */
  pattern?: { re: RegExp; describes: string };
}

export const OPTIONS: readonly OptionSpec[] = [
  { key: "port", flag: "--port", env: "PORT", kind: "number", description: "TCP port to listen on (0 picks a free one)" },
  {
    key: "host",
    flag: "--host",
    env: "HOST",
    kind: "string",
    description: "interface to bind: 127.0.0.1 (this machine only) by default, 0.0.0.0 for every interface",
  },
  { key: "scenario", flag: "--scenario", env: "SCENARIO", kind: "string", description: "global scenario name" },
  { key: "scenarios", flag: "--scenarios", env: "SCENARIOS", kind: "string", description: "folder of scenario files" },
  { key: "fixtures", flag: "--fixtures", env: "FIXTURES", kind: "string", description: "folder of fixture JSON files (read-only initial state)" },
  {
    key: "data",
    flag: "--data",
    env: "DATA_FILE",
    kind: "string",
    description: "lowdb JSON file that keeps runtime state across restarts (default: memory only)",
  },
  {
    key: "redisUrl",
    flag: "--redis-url",
    env: "REDIS_URL",
    kind: "string",
    pattern: { re: /^rediss?:\/\/\S+$/i, describes: "a redis:// address such as redis://127.0.0.1:6379/0" },
    description: "keep the state in Redis, shared by every Sandgate started with the same address and prefix (replicas behind a load balancer)",
  },
  {
    key: "workers",
    flag: "--workers",
    env: "WORKERS",
    kind: "string",
    pattern: { re: /^(auto|[1-9]\d{0,2})$/, describes: "a number of processes, or auto (one per core)" },
    description: "processes serving the port, so Sandgate uses every core: a number, or auto (one per core); more than one needs --redis-url",
  },
  {
    key: "redisCluster",
    flag: "--redis-cluster",
    env: "REDIS_CLUSTER",
    kind: "boolean",
    description: "--redis-url is a node of a Redis Cluster: each merchant's keys live on the node that holds its hash slot",
  },
  {
    key: "redisPrefix",
    flag: "--redis-prefix",
    env: "REDIS_PREFIX",
    kind: "string",
    description: "prefix of Sandgate's Redis keys: one Redis can hold several separate sandboxes",
  },
  { key: "seed", flag: "--seed", env: "SEED", kind: "string", description: "seed for ids and generated values (default: random, kept in --data)" },
  {
    key: "signatureMode",
    flag: "--signature-mode",
    env: "SIGNATURE_MODE",
    kind: "string",
    choices: ["lenient", "strict"],
    description: "lenient accepts any 64-hex encryption_data; strict checks it with the merchant's key",
  },
  {
    key: "batchSignature",
    flag: "--batch-signature",
    env: "BATCH_SIGNATURE",
    kind: "string",
    choices: ["envelope", "orders"],
    description:
      "a Sandgate setting, not the gateway's: envelope signs capture, review, cancel and refund over merchant_id and account_id (as the gateway, inferred); orders signs each order's fields too, so a captured signature acts for those orders only",
  },
  {
    key: "merchantKeys",
    flag: "--merchant-keys",
    env: "MERCHANT_KEYS",
    kind: "string",
    choices: ["id", "random"],
    description:
      "a provisioned merchant's secret key: id (sk_test_<id>, anyone can compute it) or random (shown to operators only: sandgate ctl merchant key <id>)",
  },
  {
    key: "maxAccounts",
    flag: "--max-accounts",
    env: "MAX_ACCOUNTS",
    kind: "number",
    description: "accounts a merchant may have: a request naming one more is refused (I0015) and provisions nothing",
  },
  {
    key: "strictMerchants",
    flag: "--strict-merchants",
    env: "STRICT_MERCHANTS",
    kind: "boolean",
    description: "refuse unknown merchant/account ids with 404 instead of provisioning them",
  },
  {
    key: "baseUrl",
    flag: "--base-url",
    env: "BASE_URL",
    kind: "string",
    // payers' browsers follow issuer_url and page links: they must be absolute
    pattern: { re: /^https?:\/\/[^\s/]+(\/\S*)?$/i, describes: "an absolute http(s) address such as https://sandbox.example.com" },
    description: "public address used in issuer_url and page links (default: from the request's Host)",
  },
  {
    key: "allowedHosts",
    flag: "--allowed-hosts",
    env: "ALLOWED_HOSTS",
    kind: "string",
    pattern: {
      re: /^\s*(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\s*(,\s*(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\s*)*$/i,
      describes: "host names, comma-separated (sandbox.example.com, *.corp.example)",
    },
    description:
      "host names a browser may reach the dashboard and /__sandbox under, besides localhost, IP addresses and --base-url's host, comma-separated (*.example.com allowed); scripts without Origin or Sec-Fetch-* reach it under any name",
  },
  {
    key: "adminToken",
    flag: "--admin-token",
    env: "ADMIN_TOKEN",
    kind: "string",
    description: "when set, /__sandbox requires `Authorization: Bearer <token>`",
  },
  {
    key: "notifyAllow",
    flag: "--notify-allow",
    env: "NOTIFY_ALLOW",
    kind: "string",
    description:
      "hosts and ranges notifications, resends, triggers and receiver checks may go to, comma-separated (hooks.example.com, *.example.com, 10.0.0.0/8); default: any",
  },
  { key: "bodyLimit", flag: "--body-limit", env: "BODY_LIMIT", kind: "string", description: "largest accepted request body (bigger gets 413)" },
  {
    key: "headerTimeoutMs",
    flag: "--header-timeout-ms",
    env: "HEADER_TIMEOUT_MS",
    kind: "number",
    description: "a request's headers must arrive within this many ms of its first byte (408 and closed otherwise)",
  },
  {
    key: "bodyTimeoutMs",
    flag: "--body-timeout-ms",
    env: "BODY_TIMEOUT_MS",
    kind: "number",
    description: "and its body within this many ms after them (408 and closed otherwise)",
  },
  {
    key: "idleTimeoutMs",
    flag: "--idle-timeout-ms",
    env: "IDLE_TIMEOUT_MS",
    kind: "number",
    description: "an idle keep-alive connection is closed after this many ms",
  },
  {
    key: "maxConnectionsPerClient",
    flag: "--max-connections-per-client",
    env: "MAX_CONNECTIONS_PER_CLIENT",
    kind: "number",
    description:
      "connections open at once from one client address; one more is answered 503 with Retry-After and closed (0: no cap; behind a proxy every client is the proxy's address)",
  },
  {
    key: "maxConnections",
    flag: "--max-connections",
    env: "MAX_CONNECTIONS",
    kind: "number",
    description: "connections open at once in all; one more is answered 503 with Retry-After and closed (0: no cap)",
  },
  {
    key: "logLevel",
    flag: "--log-level",
    env: "LOG_LEVEL",
    kind: "string",
    choices: ["silent", "error", "warn", "info", "debug"],
    description: "structured log level (JSON lines on stdout)",
  },
  {
    key: "coverageReport",
    flag: "--coverage-report",
    env: "COVERAGE_REPORT",
    kind: "string",
    description: "at shutdown, write which scenario rules answered and which outcomes were never produced to <path>.json and <path>.md",
  },
  {
    key: "keepRunning",
    flag: "--keep-running",
    env: "KEEP_RUNNING",
    kind: "boolean",
    description: "keep running when the process that started Sandgate (npx, npm start, a shell script) goes away; by default it stops with it",
  },
  {
    key: "notifySchedule",
    flag: "--notify-schedule",
    env: "NOTIFY_SCHEDULE",
    kind: "string",
    choices: ["fast", "realistic"],
    description: "notification retry schedule: fast (1, 2, 4, 8, 16 s) or realistic (1 min … 24 h)",
  },
];

export const DEFAULTS: Config = {
  port: 8080,
  host: "127.0.0.1",
  scenario: "default",
  scenarios: defaultScenariosDir,
  fixtures: defaultFixturesDir,
  data: undefined,
  seed: undefined,
  signatureMode: "lenient",
  batchSignature: "envelope",
  strictMerchants: false,
  merchantKeys: "id",
  maxAccounts: 100,
  baseUrl: undefined,
  adminToken: undefined,
  allowedHosts: undefined,
  notifyAllow: undefined,
  bodyLimit: "1mb",
  headerTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  idleTimeoutMs: 5_000,
  maxConnectionsPerClient: 500,
  maxConnections: 10_000,
  logLevel: "info",
  notifySchedule: "fast",
  keepRunning: false,
  coverageReport: undefined,
  redisUrl: undefined,
  redisPrefix: "sandgate:",
  redisCluster: false,
  workers: "1",
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Turns raw strings (from flags or env) into a checked Config. Flags win over env, env over defaults. */
export function resolveConfig(flags: Partial<Record<keyof Config, string | boolean>>, env: Record<string, string | undefined>): Config {
  const config: Config = { ...DEFAULTS };
  const target = config as unknown as Record<string, unknown>;
  for (const spec of OPTIONS) {
    const raw = flags[spec.key] ?? env[spec.env];
    // an empty token would silently mean "no token": an open sandbox someone meant to close
    if (spec.key === "adminToken" && raw === "")
      throw new ConfigError(`${spec.flag} / ${spec.env} is set but empty: give a token (16 characters or more), or unset it for a sandbox without one`);
    if (raw === undefined || raw === "") continue;
    target[spec.key] = convert(spec, raw);
  }
  if (config.data && config.redisUrl) throw new ConfigError("--data and --redis-url are two places for the same state: pick one");
  if (config.redisCluster && !config.redisUrl) throw new ConfigError("--redis-cluster needs --redis-url (a node of the cluster)");
  if (config.workers !== "1" && !config.redisUrl) throw new ConfigError("--workers needs --redis-url: each process would otherwise keep its own state");
  if (config.notifyAllow !== undefined) {
    try {
      parseAllowList(config.notifyAllow);
    } catch (err) {
      throw new ConfigError((err as Error).message);
    }
  }
  return config;
}

function convert(spec: OptionSpec, raw: string | boolean): unknown {
  const where = `${spec.flag} / ${spec.env}`;
  if (spec.kind === "boolean") {
    if (typeof raw === "boolean") return raw;
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    throw new ConfigError(`${where}: expected true or false, got "${raw}"`);
  }
  const text = String(raw);
  if (spec.kind === "number") {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0 || n > 65535)
      throw new ConfigError(`${where}: expected ${spec.key === "port" ? "a port number" : "a whole number"} 0-65535, got "${text}"`);
    return n;
  }
  if (spec.choices && !spec.choices.includes(text)) {
    throw new ConfigError(`${where}: expected one of ${spec.choices.join(", ")}, got "${text}"`);
  }
  if (spec.pattern && !spec.pattern.re.test(text)) throw new ConfigError(`${where}: expected ${spec.pattern.describes}, got "${text}"`);
  return text;
}
