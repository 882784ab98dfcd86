// `sandgate listen --url <sandgate> --merchant <id> --key <key> --forward-to <receiver> [--print]`:
// a merchant's notifications from a shared Sandgate to a receiver it cannot reach (a laptop's
// localhost). It opens GET /__sandbox/listen (server-sent events, authenticated by the merchant's key:
// notify/listen-auth.ts), POSTs each attempt it is handed to --forward-to exactly as Sandgate would
// have sent it (body, signature and headers), and reports the receiver's answer, which Sandgate
// records as the attempt (and retries on, as on any other). A dropped connection is opened again at
// once; Sandgate sends every attempt still unanswered again, and the listener, which keeps the ids it
// handled, answers a repeat from what it did the first time: nothing is lost, nothing delivered twice.
// --print writes each notification as a JSON line (alone: it acknowledges each one it printed).
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { command, parseFlags } from "./command.js";
import { callPath } from "../api/operator-calls.js";
import { listenHeaders } from "../notify/listen-auth.js";
import type { ListenOffer, ListenReport } from "../notify/listeners.js";
import { postRequest } from "../notify/dispatcher.js";
import { nodeHttpTransport } from "./http-transport.js";

interface Flags {
  url: string;
  merchant: string;
  key?: string;
  forwardTo?: string;
  print?: boolean;
}

export interface ListenOptions {
  /** the Sandgate, e.g. https://sandgate.team */
  url: string;
  merchant: string;
  key: string;
  forwardTo?: string | undefined;
  /** each notification as a JSON line */
  print?: ((line: string) => void) | undefined;
  /** what the listener says of itself (connected, reconnecting, refused) */
  say: (line: string) => void;
}

export interface Listening {
  /** 0 once stopped, 2 when Sandgate refuses the merchant's key (never retried) */
  done: Promise<number>;
  stop(): void;
}

/** a connection that has sent nothing (not even the 15 s heartbeat) this long is dead */
const SILENT_MS = 45_000;
/** the wait before opening the connection again, by failures in a row (one that was ready: the first) */
const RECONNECT_MS = [100, 250, 500, 1_000, 2_000, 5_000];
const REPORT_TRIES = 6;
/** how long stopping waits for Sandgate to take the goodbye */
const GOODBYE_MS = 2_000;
const KEEP_IDS = 10_000;
/** what a direct delivery would send, and nothing else */
const FORWARDED = /^(content-type|user-agent|x-sandbox-[a-z-]+)$/;

// not unref()ed: between two connections this wait is all that keeps the process alive
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const PRINTED: ListenReport = { http_status: null, error: "", duration_ms: 0, response_body: "printed by sandgate listen (no --forward-to)" };

export function listen(options: ListenOptions): Listening {
  const base = options.url.replace(/\/+$/, "");
  const streamPath = callPath("listenNotifications");
  const answerPath = callPath("answerListenedNotification");
  /** the attempts handled, by id: their report once the receiver answered */
  const handled = new Map<string, ListenReport | undefined>();
  let stopped = false;
  let current: IncomingMessage | undefined;
  /** what the ready event of the open connection named this listener: its goodbye says it */
  let listenerId: string | undefined;
  let finish: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (finish = resolve));

  async function report(id: string, answer: ListenReport): Promise<void> {
    const body = JSON.stringify({ offer: id, ...answer });
    for (let i = 0; i < REPORT_TRIES && !stopped; i++) {
      try {
        const res = await nodeHttpTransport(`${base}${answerPath}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...listenHeaders(options.merchant, options.key, "POST", answerPath) },
          body,
          timeoutMs: 10_000,
        });
        if (res.status < 500) return; // recorded, or too late: either way Sandgate has its answer
      } catch {
        // the network: try again (a repeat of the offer after a reconnect also reports it)
      }
      await sleep(RECONNECT_MS[Math.min(i + 1, RECONNECT_MS.length - 1)]!);
    }
  }

  async function handle(offer: ListenOffer): Promise<void> {
    if (handled.has(offer.id)) {
      // sent again after a dropped connection: answered from what was done, never delivered twice
      const known = handled.get(offer.id);
      if (known) await report(offer.id, known);
      return;
    }
    handled.set(offer.id, undefined);
    if (handled.size > KEEP_IDS) handled.delete(handled.keys().next().value!);
    let answer = PRINTED;
    if (options.forwardTo) {
      const headers = Object.fromEntries(Object.entries(offer.headers).filter(([name]) => FORWARDED.test(name.toLowerCase())));
      const outcome = await postRequest(options.forwardTo, { headers, body: offer.body }, offer.timeout_ms);
      const { http_status, duration_ms, response_body, code } = outcome;
      answer = { http_status, error: http_status === null ? outcome.error : "", duration_ms, response_body, ...(code ? { code } : {}) };
    }
    handled.set(offer.id, answer);
    options.print?.(printLine(offer, answer));
    await report(offer.id, answer);
  }

  /** One connection until it ends: "refused" (the key), "busy" (too many listeners), "was ready" (it streamed), "ended" (it never did). */
  function connect(): Promise<"refused" | "busy" | "was ready" | "ended"> {
    return new Promise((resolve) => {
      const url = `${base}${streamPath}`;
      const send = url.startsWith("https:") ? httpsRequest : httpRequest;
      const req = send(
        url,
        { method: "GET", headers: { accept: "text/event-stream", ...listenHeaders(options.merchant, options.key, "GET", streamPath) } },
        (res) => {
          current = res;
          if (res.statusCode !== 200) {
            let text = "";
            res.on("data", (d: Buffer) => (text += d.toString()));
            res.on("end", () => {
              const message = messageOf(text) ?? `HTTP ${res.statusCode}`;
              options.say(`sandgate listen: ${base} refused: ${message}`);
              resolve(res.statusCode === 401 ? "refused" : res.statusCode === 429 ? "busy" : "ended");
            });
            return;
          }
          res.setEncoding("utf8");
          let ready = false;
          let buffer = "";
          let silence = setTimeout(() => req.destroy(), SILENT_MS);
          res.on("data", (chunk: string) => {
            clearTimeout(silence);
            silence = setTimeout(() => req.destroy(), SILENT_MS);
            buffer += chunk.replace(/\r\n?/g, "\n");
            let end: number;
            while ((end = buffer.indexOf("\n\n")) >= 0) {
              const event = parseEvent(buffer.slice(0, end));
              buffer = buffer.slice(end + 2);
              if (event?.name === "ready") {
                ready = true;
                listenerId = listenerIdOf(event.data);
                options.say(`sandgate listen: ready: ${options.merchant}'s notifications ${where(options)}`);
              }
              if (event?.name === "notification") {
                try {
                  void handle(JSON.parse(event.data) as ListenOffer);
                } catch {
                  options.say("sandgate listen: an event that is not a notification was skipped");
                }
              }
            }
          });
          const ended = () => {
            clearTimeout(silence);
            listenerId = undefined;
            resolve(ready ? "was ready" : "ended");
          };
          res.on("end", ended);
          res.on("close", ended);
          res.on("error", ended);
        },
      );
      req.on("error", (err: NodeJS.ErrnoException) => {
        if (!stopped) options.say(`sandgate listen: cannot reach ${base}: ${err.code ?? err.message}`);
        resolve("ended");
      });
      req.end();
    });
  }

  void (async () => {
    for (let failures = 0; !stopped;) {
      const end = await connect();
      if (stopped) break;
      if (end === "refused") return finish(2);
      // a connection that was ready starts the waits over: it is opened again at once
      failures = end === "was ready" ? 0 : failures + 1;
      options.say(end === "was ready" ? "sandgate listen: connection lost: opening it again" : "sandgate listen: trying again");
      await sleep(end === "busy" ? 5_000 : RECONNECT_MS[Math.min(failures, RECONNECT_MS.length - 1)]!);
    }
    // stopped: stop() finishes, once its goodbye is said
  })();

  /** Tells Sandgate this listener is going (no grace period: the merchant's notifications go to notify_url at once); bounded, and quiet when it cannot. */
  async function goodbye(id: string): Promise<void> {
    const path = callPath("endListening", { listener: id });
    try {
      const res = await nodeHttpTransport(`${base}${path}`, {
        method: "DELETE",
        headers: listenHeaders(options.merchant, options.key, "DELETE", path),
        timeoutMs: GOODBYE_MS,
      });
      if (res.status === 200) options.say(`sandgate listen: stopped: ${options.merchant}'s notifications go to their notify_url again`);
    } catch {
      // unreachable: Sandgate holds them for its grace period, as after a dropped connection
    }
  }

  return {
    done,
    stop() {
      if (stopped) return;
      stopped = true;
      const id = listenerId;
      void (id ? goodbye(id) : Promise.resolve()).then(() => {
        current?.destroy();
        finish(0);
      });
    },
  };
}

/** The listener's id from the ready event's data ({"merchant_id","grace_ms","listener_id"}). */
function listenerIdOf(data: string): string | undefined {
  try {
    const id = (JSON.parse(data) as { listener_id?: unknown }).listener_id;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

const where = (o: Pick<ListenOptions, "forwardTo" | "print">) =>
  o.forwardTo ? `are forwarded to ${o.forwardTo}${o.print ? " and printed" : ""}` : "are printed and acknowledged";

function parseEvent(block: string): { name: string; data: string } | undefined {
  let name = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  return data.length ? { name, data: data.join("\n") } : undefined;
}

function messageOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: string; message?: string };
    return body.message ? `${body.error ?? "error"}: ${body.message}` : undefined;
  } catch {
    return undefined;
  }
}

/** A notification as a line of JSON: the attempt, its body (parsed) and what the receiver answered. */
function printLine(offer: ListenOffer, answer: ListenReport): string {
  let body: unknown = offer.body;
  try {
    body = JSON.parse(offer.body);
  } catch {
    // a receiver check's probe may not be JSON: kept as text
  }
  const { id, notification_id, event, attempt } = offer;
  return JSON.stringify({ id, notification_id, event, attempt, body, answer: { http_status: answer.http_status, error: answer.error } });
}

export async function run(args: string[]): Promise<number> {
  const program = command(
    "sandgate listen",
    "receive a merchant's notifications from a shared Sandgate and deliver each to a local receiver, reporting its answer back as the delivery",
  )
    .requiredOption("--url <url>", "the Sandgate to listen to (its base URL)")
    .requiredOption("--merchant <id>", "the merchant whose notifications to receive")
    .option("--key <secret>", "the merchant's secret key (default: SANDGATE_MERCHANT_KEY); never sent, it signs the requests")
    .option("--forward-to <url>", "deliver each notification here (POST, body and headers as Sandgate sends them)")
    .option("--print", "write each notification as a JSON line on stdout (without --forward-to: and acknowledge it)");
  const flags = parseFlags<Flags>(program, args);
  if (typeof flags === "number") return flags;
  const key = flags.key ?? process.env.SANDGATE_MERCHANT_KEY;
  const bad = (message: string) => {
    process.stderr.write(`sandgate listen: ${message}\n`);
    return 2;
  };
  if (!/^https?:\/\/\S+$/i.test(flags.url)) return bad(`--url must be an http(s) URL, got "${flags.url}"`);
  if (flags.forwardTo !== undefined && !/^https?:\/\/\S+$/i.test(flags.forwardTo)) return bad(`--forward-to must be an http(s) URL, got "${flags.forwardTo}"`);
  if (!key) return bad("the merchant's key is needed: --key, or SANDGATE_MERCHANT_KEY");
  if (!flags.forwardTo && !flags.print) return bad("say where notifications go: --forward-to <url>, --print, or both");
  const listening = listen({
    url: flags.url,
    merchant: flags.merchant,
    key,
    forwardTo: flags.forwardTo,
    print: flags.print ? (line) => process.stdout.write(`${line}\n`) : undefined,
    say: (line) => process.stderr.write(`${line}\n`),
  });
  const stop = () => listening.stop();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return listening.done;
}
