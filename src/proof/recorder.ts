// `sandgate record`'s proxy: every request goes to the real gateway unchanged, its answer comes back
// unchanged, and the exchange is appended to a HAR (masked: src/domain/masking.ts) before the client
// sees it. With notifyTo, notify_url in payment requests points at the recorder, which relays the
// gateway's notifications to the merchant and records them too. The recorder never invents an
// answer: when the gateway cannot be reached the client gets a 502 and the HAR gets nothing.
import { Agent as HttpAgent, createServer, request as httpRequest, STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { escapeHtml, escapeText } from "../base/markup.js";
import { packageVersion } from "../base/paths.js";
import type { EntryKind } from "./har.js";
import { openHarWriter, type HarWriter, type RecordedEntry } from "./har-writer.js";
import { maskUrl } from "../domain/masking.js";
import { headerPairs, maskBody, queryOf } from "./masking-recorded.js";
import { pointNotifyUrlAt } from "./notify-address.js";
import { GATEWAY_OPERATIONS, GATEWAY_PREFIX, operationAt } from "../domain/gateway-operations.js";

export interface RecorderOptions {
  /** the real gateway's base URL; may carry a path prefix (http://host/gw → /gw/v1/authorise) */
  upstream: string;
  /** the HAR file (created with its folders; an existing one is overwritten) */
  out: string;
  /** 0: any free port (default 8090) */
  port?: number;
  host?: string;
  /** the merchant's notification receiver; without it notify_url is forwarded as sent */
  notifyTo?: string;
  /** the recorder as the gateway reaches it (a tunnel's address); default its own URL */
  publicUrl?: string;
  /** how long the gateway (or the merchant's receiver) may take to answer */
  timeoutMs?: number;
  bodyLimit?: number;
  /** one line per problem (the gateway or the receiver unreachable); default stderr */
  warn?: (line: string) => void;
}

export interface Recorder {
  url: string;
  port: number;
  /** Stops listening, lets exchanges under way finish (2 s at most), closes the HAR. */
  close(): Promise<void>;
  /** exchanges written to the HAR */
  count(): number;
}

const NOTIFY_PATH = "/__recorder/notify";
export const DEFAULT_RECORDER_PORT = 8090;
const UPSTREAM_TIMEOUT_MS = 30_000;
const BODY_LIMIT = 10 * 1024 * 1024;
const CLOSE_GRACE_MS = 2_000;
const DRAIN_LIMIT = 64 * 1024 * 1024;

/** Headers of one connection, not of the message: never passed on. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "te", "trailer", "trailers", "transfer-encoding", "upgrade"]);
/** Request headers a HAR reader needs to replay the answer. */
const RECORDED_REQUEST_HEADER = (name: string) => name === "content-type" || name === "accept" || name.startsWith("x-sandbox-");

interface Answer {
  status: number;
  statusText: string;
  rawHeaders: string[];
  body: Buffer;
}

/** One request and the answer it got, as the recorder saw them (before masking). */
interface Exchange {
  kind: EntryKind;
  started: Date;
  elapsedMs: number;
  method: string;
  url: string;
  requestHeaders: string[];
  requestBody: Buffer;
  answer: Answer;
}

export async function startRecorder(options: RecorderOptions): Promise<Recorder> {
  const upstream = httpUrl(options.upstream, "upstream");
  const notifyTo = options.notifyTo === undefined ? undefined : httpUrl(options.notifyTo, "notify-to");
  const basePath = upstream.pathname.replace(/\/+$/, "");
  const host = options.host ?? "127.0.0.1";
  const timeoutMs = options.timeoutMs ?? UPSTREAM_TIMEOUT_MS;
  const bodyLimit = options.bodyLimit ?? BODY_LIMIT;
  const warn = options.warn ?? ((line: string) => process.stderr.write(`sandgate record: ${line}\n`));
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  let har: HarWriter;
  try {
    har = openHarWriter(options.out, { name: "Sandgate recorder", version: packageVersion() });
  } catch (err) {
    throw new Error(`cannot write the HAR ${options.out} (${describe(err)})`);
  }
  const inFlight = new Set<Promise<void>>();
  let notifyAddress = "";

  const send = (target: URL, method: string, path: string, headers: string[], body: Buffer) =>
    exchangeWith(target, method, path, headers, body, timeoutMs, target.protocol === "https:" ? agents.https : agents.http);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = new Date();
    const clock = performance.now();
    const path = req.url?.startsWith("/") ? req.url : `/${req.url ?? ""}`;
    const pathname = path.split("?")[0]!;
    const body = await readBody(req, bodyLimit);
    if (body === undefined) {
      warn(`${req.method} ${pathname}: body over ${bodyLimit} bytes, answered 413 and not forwarded`);
      return failure(res, pathname, 413, `I0004:Request body too large: over ${bodyLimit} bytes; the recorder forwarded nothing`);
    }
    const record = (kind: EntryKind, url: string, answer: Answer) =>
      har.append(
        entryOf({
          kind,
          started,
          elapsedMs: performance.now() - clock,
          method: req.method ?? "GET",
          url,
          requestHeaders: req.rawHeaders,
          requestBody: body,
          answer,
        }),
      );

    if (notifyTo && req.method === "POST" && pathname.endsWith(NOTIFY_PATH)) {
      const headers = forwardedHeaders(req.rawHeaders, notifyTo.host, body.length, true);
      let answer: Answer;
      try {
        const merchant = await send(notifyTo, "POST", `${notifyTo.pathname}${notifyTo.search}`, headers, body);
        // the gateway is given what it reads of an answer: status, content type (and coding), body
        answer = { ...merchant, rawHeaders: merchant.rawHeaders.filter((_, i, all) => /^content-(type|encoding)$/i.test(all[i - (i % 2)]!)) };
      } catch (err) {
        const reason = `the merchant's notify URL ${notifyTo.href} could not be reached: ${describe(err)}`;
        warn(`notification not relayed: ${reason}`);
        answer = {
          status: 502,
          statusText: "Bad Gateway",
          rawHeaders: ["Content-Type", "text/plain; charset=utf-8"],
          body: Buffer.from(`Sandgate recorder: ${reason}\n`),
        };
      }
      record("notification", notifyTo.href, answer);
      return reply(res, answer);
    }

    const sent = notifyTo ? pointNotifyUrlAt(body, req.headers, notifyAddress) : body;
    const headers = forwardedHeaders(req.rawHeaders, upstream.host, sent.length, hasBody(req));
    const targetPath = `${basePath}${path}`;
    let answer: Answer;
    try {
      answer = await send(upstream, req.method ?? "GET", targetPath, headers, sent);
    } catch (err) {
      const reason = describe(err);
      warn(`upstream unreachable for ${req.method} ${pathname}: ${reason}`);
      return failure(res, pathname, 502, `I0502:Upstream unreachable: ${reason}`, { "X-Sandgate-Recorder": "upstream-unreachable" });
    }
    record(pathname.startsWith(GATEWAY_PREFIX) ? "gateway" : "page", `${upstream.origin}${targetPath}`, answer);
    reply(res, answer);
  }

  const server = createServer((req, res) => {
    const done = handle(req, res)
      .catch((err: unknown) => {
        // the client went away, or its request could not be read: nothing to answer, nothing recorded
        warn(`${req.method} ${req.url}: ${describe(err)}`);
        if (!res.headersSent) res.destroy();
      })
      .finally(() => inFlight.delete(done));
    inFlight.add(done);
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? DEFAULT_RECORDER_PORT, host, () => resolve());
    });
  } catch (err) {
    har.close();
    throw new Error(`cannot listen on ${host}:${options.port ?? DEFAULT_RECORDER_PORT} (${describe(err)})`);
  }
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  // a wildcard address is where the recorder listens, not one the gateway can call
  const reachable = url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])/, "http://127.0.0.1");
  notifyAddress = `${(options.publicUrl ?? reachable).replace(/\/+$/, "")}${NOTIFY_PATH}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    count: () => har.count(),
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
        server.closeAllConnections();
        agents.http.destroy();
        agents.https.destroy();
        har.close();
        await closed;
      })()),
  };
}

function httpUrl(text: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`${what} must be an http or https URL, not "${text}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${what} must be an http or https URL, not "${text}"`);
  return url;
}

/**
 * The body's bytes; undefined when it is over the limit. The rest is read and dropped (up to
 * DRAIN_LIMIT more) so the client, still sending, reads the 413 instead of a reset connection.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else {
        chunks.length = 0;
        if (size > limit + DRAIN_LIMIT) resolve(undefined);
      }
    });
    req.on("end", () => resolve(size > limit ? undefined : Buffer.concat(chunks)));
    req.on("error", reject);
    // after "end" this changes nothing: a settled promise stays as it is
    req.on("close", () => reject(new Error("the client closed the connection before its request was read")));
  });
}

const hasBody = (req: IncomingMessage) => req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined;

/** Names a message's Connection header lists: hop-by-hop for that message too. */
function connectionTokens(rawHeaders: readonly string[]): Set<string> {
  const tokens = new Set<string>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === "connection") for (const t of rawHeaders[i + 1]!.split(",")) tokens.add(t.trim().toLowerCase());
  }
  return tokens;
}

const isHopByHop = (name: string, listed: Set<string>) => HOP_BY_HOP.has(name) || name.startsWith("proxy-") || listed.has(name);

/** The request's headers as sent (case and order kept), for another host; the body's length as it goes. */
function forwardedHeaders(rawHeaders: readonly string[], host: string, length: number, withBody: boolean): string[] {
  const listed = connectionTokens(rawHeaders);
  const out = ["Host", host];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    // expect: 100-continue is between the client and the recorder, which has the whole body already
    if (isHopByHop(name, listed) || name === "host" || name === "content-length" || name === "expect") continue;
    out.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  if (withBody || length > 0) out.push("Content-Length", String(length));
  return out;
}

function headerValue(rawHeaders: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) return rawHeaders[i + 1];
  return undefined;
}

/** One request and its whole answer; rejects when there is no answer (refused, DNS, timeout, cut off). */
function exchangeWith(target: URL, method: string, path: string, headers: string[], body: Buffer, timeoutMs: number, agent: HttpAgent): Promise<Answer> {
  const request = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      { protocol: target.protocol, hostname: target.hostname.replace(/^\[|\]$/g, ""), port: target.port, method, path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 502, statusText: res.statusMessage ?? "", rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) });
        });
        res.on("error", reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    req.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}

/** The answer as it came: status, headers but the connection's own, body. */
function reply(res: ServerResponse, answer: Answer): void {
  const listed = connectionTokens(answer.rawHeaders);
  const headers: string[] = [];
  let length = false;
  for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) {
    const name = answer.rawHeaders[i]!.toLowerCase();
    if (isHopByHop(name, listed)) continue;
    if (name === "content-length") length = true;
    headers.push(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
  }
  // a chunked answer was read whole: it goes on with its length
  if (!length && answer.status !== 204 && answer.status !== 304) headers.push("Content-Length", String(answer.body.length));
  res.writeHead(answer.status, answer.statusText || STATUS_CODES[answer.status] || "", headers);
  res.end(answer.body);
}

function describe(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length) return describe(err.errors[0]);
  if (err instanceof Error) return err.message || (err as NodeJS.ErrnoException).code || err.name;
  return String(err);
}

/** The recorder's own refusal, in the format of the operation the client called. */
function failure(res: ServerResponse, pathname: string, status: number, message: string, extra: Record<string, string> = {}): void {
  const operation = operationAt(pathname);
  const format = operation ? GATEWAY_OPERATIONS[operation].format : pathname.toLowerCase().startsWith(GATEWAY_PREFIX) ? "json" : "html";
  let type: string;
  let body: string;
  if (format === "xml") {
    type = "application/xml; charset=utf-8";
    body = `<?xml version="1.0" encoding="UTF-8"?><respon><return_status>0</return_status><return_message>${escapeText(message)}</return_message></respon>`;
  } else if (format === "json") {
    type = "application/json; charset=utf-8";
    body = JSON.stringify({ return_status: "0", return_message: message });
  } else {
    type = "text/html; charset=utf-8";
    const title = status === 502 ? "The gateway could not be reached" : "Request too large";
    body = `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>Sandgate recorder: ${escapeHtml(message)}</p></body></html>\n`;
  }
  res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body), ...(status === 413 ? { Connection: "close" } : {}), ...extra });
  res.end(body);
}

/** A body's bytes as they mean: decompressed (gzip, deflate, br); undefined when that fails. */
function decoded(body: Buffer, encoding: string | undefined): Buffer | undefined {
  const name = (encoding ?? "identity").trim().toLowerCase();
  try {
    if (name === "gzip" || name === "x-gzip") return gunzipSync(body);
    if (name === "deflate") return inflateSync(body);
    if (name === "br") return brotliDecompressSync(body);
    return name === "identity" || name === "" ? body : undefined;
  } catch {
    return undefined;
  }
}

const isText = (mimeType: string) => mimeType === "" || /^text\/|json|xml|javascript|x-www-form-urlencoded|html|svg/i.test(mimeType);

/** The HAR entry of one exchange: masked, the answer's body as text (base64 when it is not text). */
function entryOf(x: Exchange): RecordedEntry {
  const requestType = headerValue(x.requestHeaders, "content-type") ?? "";
  const requestText = decoded(x.requestBody, headerValue(x.requestHeaders, "content-encoding"))?.toString("utf8");
  const responseType = headerValue(x.answer.rawHeaders, "content-type") ?? "";
  const listed = connectionTokens(x.answer.rawHeaders);
  const plain = decoded(x.answer.body, headerValue(x.answer.rawHeaders, "content-encoding"));
  const content =
    plain !== undefined && isText(responseType)
      ? { size: plain.length, mimeType: responseType, text: maskBody(plain.toString("utf8"), responseType) }
      : { size: (plain ?? x.answer.body).length, mimeType: responseType, text: (plain ?? x.answer.body).toString("base64"), encoding: "base64" as const };
  const location = headerValue(x.answer.rawHeaders, "location");
  const time = Math.round(x.elapsedMs * 100) / 100;
  return {
    startedDateTime: x.started.toISOString(),
    time,
    request: {
      method: x.method,
      url: maskUrl(x.url),
      httpVersion: "HTTP/1.1",
      cookies: [],
      headers: headerPairs(x.requestHeaders, RECORDED_REQUEST_HEADER),
      queryString: queryOf(x.url),
      ...(x.requestBody.length > 0 ? { postData: { mimeType: requestType, text: requestText === undefined ? "" : maskBody(requestText, requestType) } } : {}),
      headersSize: -1,
      bodySize: x.requestBody.length,
    },
    response: {
      status: x.answer.status,
      statusText: x.answer.statusText || STATUS_CODES[x.answer.status] || "",
      httpVersion: "HTTP/1.1",
      cookies: [],
      headers: headerPairs(x.answer.rawHeaders, (name) => !isHopByHop(name, listed) && name !== "set-cookie"),
      content,
      redirectURL: location === undefined ? "" : maskUrl(location),
      headersSize: -1,
      bodySize: x.answer.body.length,
    },
    cache: {},
    timings: { send: 0, wait: time, receive: 0 },
    _sandgate: { kind: x.kind },
  };
}
