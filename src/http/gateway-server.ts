// Sandgate on node:http. The server itself: its deadlines and connection caps (serverWithin, at
// the end). And the gateway's operations, in front of the Express app (which serves pages and the
// operator API): a POST to an operation's path, matched as an Express route would be (any case,
// one trailing slash allowed), is found with one map lookup, its body read off the socket
// (body-parser: the size limit, Content-Encoding), handed to the core (operation.ts runOperation)
// as plain data, and the core's answer written back: waiting, hanging or resetting as the
// scenario said.
import bodyParser from "body-parser";
import { GatewayError } from "../domain/codes.js";
import type { Deps } from "../deps/deps.js";
import { GATEWAY_PAGE_CSP } from "../render/checkout-page.js";
import { routePath, runOperation, type GatewayAnswer, type Operation } from "./operation.js";
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** The request listener: a gateway operation is answered here, any other request goes on to `rest` (the Express app). */
export function gatewayOperations(operations: readonly Operation[], deps: Deps, failed: (err: unknown, res: ServerResponse) => void, rest: Listener): Listener {
  const readBytes = createBytesReader(deps.config.bodyLimit);
  const byPath = new Map(operations.map((op) => [op.path.toLowerCase(), op]));
  return (req, res) => {
    const op = req.method === "POST" ? byPath.get(routePath(req.url ?? "/")) : undefined;
    if (!op) return rest(req, res);
    const started = performance.now();
    // what fails after the core's own try (sending, say) goes to the app's error answer
    readBytes(req, res)
      .then((body) =>
        runOperation(
          op,
          { url: req.url ?? "/", headers: req.headers, rawHeaders: req.rawHeaders, body, clientAddress: req.socket.remoteAddress ?? "", started },
          deps,
        ),
      )
      .then((answer) => deliver(res, answer))
      .catch((err: unknown) => failed(err, res));
  };
}

/** Reads the raw bytes with body-parser (limit → 413, Content-Encoding undone); a failure is the GatewayError the core answers with. */
function createBytesReader(limit: string) {
  const raw = bodyParser.raw({ type: () => true, limit });
  return (req: IncomingMessage, res: ServerResponse): Promise<Uint8Array | GatewayError> =>
    new Promise((resolve) => {
      raw(req, res, (err?: unknown) => {
        if (err) return resolve(translateParserError(err, limit));
        const bytes = (req as { body?: unknown }).body;
        resolve(Buffer.isBuffer(bytes) ? bytes : Buffer.alloc(0));
      });
    });
}

function translateParserError(err: unknown, limit: string): GatewayError {
  const type = (err as { type?: string }).type;
  if (type === "entity.too.large") return new GatewayError("body_too_large", `the limit is ${limit}`);
  if (type === "encoding.unsupported") return new GatewayError("unsupported_body", "Content-Encoding must be identity, gzip, deflate or br");
  if (type === "charset.unsupported") return new GatewayError("unsupported_body", "only utf-8 bodies are accepted");
  return new GatewayError("malformed_body", "the request body could not be read");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** The answer on the wire, after the scenario's wait: or never (hang), or a reset connection. */
async function deliver(res: ServerResponse, answer: GatewayAnswer): Promise<void> {
  if (answer.waitMs > 0) await sleep(answer.waitMs);
  if (res.req.socket.destroyed) return;
  if (answer.fault === "hang") return; // never answered: the client times out; the server ends the socket when it closes
  if (answer.fault === "reset") {
    res.req.socket.destroy();
    return;
  }
  // straight to Node's response: the content type is complete and there is no ETag or freshness to
  // work out, so Express's send() would only add work (and write a long body apart from the headers)
  const headers: Record<string, string | number> = { ...answer.headers, "Content-Length": Buffer.byteLength(answer.body) };
  // an HTML answer (the checkout's loading page, an HTML refusal) runs in the payer's browser: its policy allows only its own style and script
  if (answer.headers["Content-Type"]!.startsWith("text/html")) Object.assign(headers, HTML_HEADERS);
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}

const HTML_HEADERS = { "Content-Security-Policy": GATEWAY_PAGE_CSP, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" };

// Slow clients cost their own socket only. The HTTP server's deadlines: the headers within
// --header-timeout-ms (Node's, checked every half second), the body within --body-timeout-ms while
// Sandgate reads it (408 and closed: a request Sandgate holds unread, a verify waiting its turn, is
// not the client's delay), an idle keep-alive socket closed after --idle-timeout-ms. And a cap on
// the sockets open at once, from one client address (--max-connections-per-client) and in all
// (--max-connections): a socket past either is answered 503 with Retry-After and closed at once, so
// one client holding thousands of sockets cannot take the process's open files from everyone.
export interface ConnectionLimits {
  headerTimeoutMs: number;
  bodyTimeoutMs: number;
  idleTimeoutMs: number;
  /** 0: no cap */
  maxConnectionsPerClient: number;
  /** 0: no cap */
  maxConnections: number;
}

/** How often Node looks for requests past their deadlines (its default is 30 s). */
const CHECK_EVERY_MS = 500;

/** The options a server takes at creation: the headers' and the idle deadlines (the body's is bodyDeadline's). */
const deadlines = (limits: ConnectionLimits): ServerOptions => ({
  headersTimeout: limits.headerTimeoutMs,
  // Node's whole-request timer would count the time a request waits unread for its turn
  requestTimeout: 0,
  keepAliveTimeout: limits.idleTimeoutMs,
  connectionsCheckingInterval: CHECK_EVERY_MS,
});

const TIMED_OUT = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

/**
 * The body's deadline: a request whose body is not all in --body-timeout-ms after Sandgate began
 * reading it is answered 408 (unless an answer was begun) and its socket closed. Time in which
 * nothing reads it (a call waiting for a slot) does not count: the clock starts again when reading does.
 * One sweep of the requests being read, every quarter of the deadline (at most every 500 ms), not
 * a timer per request: a timer set and cleared on every request cost ~3 µs of CPU each. They are
 * found by their socket (one request is read at a time on a socket), so a request adds no listener
 * and no key of its own: the sweep forgets a socket whose request is in.
 */
function bodyDeadline(server: Server, limits: ConnectionLimits): void {
  if (limits.bodyTimeoutMs <= 0) return;
  /** by socket, the request whose body is coming, and since when it has been read */
  const reading = new Map<Socket, { req: IncomingMessage; res: ServerResponse; since: number }>();
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (req.complete) return;
    const read = reading.get(req.socket);
    if (!read) return void reading.set(req.socket, { req, res, since: performance.now() });
    read.req = req;
    read.res = res;
    read.since = performance.now();
  });
  const sweep = () => {
    const now = performance.now();
    for (const [socket, read] of reading) {
      const { req } = read;
      if (req.complete || req.destroyed) reading.delete(socket);
      else if (req.readableFlowing !== true)
        read.since = now; // held unread by Sandgate: not the client's delay
      else if (now - read.since >= limits.bodyTimeoutMs) {
        reading.delete(socket);
        if (!read.res.headersSent) req.socket.write(TIMED_OUT);
        req.socket.destroy();
      }
    }
  };
  const every = setInterval(sweep, Math.min(CHECK_EVERY_MS, Math.max(10, limits.bodyTimeoutMs / 4))).unref();
  server.once("close", () => clearInterval(every));
}

const BUSY_BODY = JSON.stringify({
  error: "too_many_connections",
  message: "this client address (or every client) has as many connections open as Sandgate takes: close some, or try again",
});
const BUSY = `HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BUSY_BODY)}\r\nConnection: close\r\n\r\n${BUSY_BODY}`;

/**
 * The HTTP server of `listener` within the limits: header and request deadlines, the body's
 * deadline, and the connection caps (a request on a socket refused past them was answered 503
 * already, and the listener never sees it).
 */
export function serverWithin(limits: ConnectionLimits, listener: (req: IncomingMessage, res: ServerResponse) => void): Server {
  let refused: (socket: Socket) => boolean = () => false;
  const server = createServer(deadlines(limits), (req, res) => (refused(req.socket) ? undefined : listener(req, res)));
  refused = capConnections(server, limits);
  bodyDeadline(server, limits);
  return server;
}

/**
 * Counts the server's open sockets by client address and refuses those past a cap (before the
 * HTTP parser sees them). Returns whether a socket was refused, for the request listener to leave
 * alone a request that still reached it.
 */
function capConnections(server: Server, limits: ConnectionLimits): (socket: Socket) => boolean {
  const refused = new WeakSet<Socket>();
  const open = new Map<string, number>();
  let all = 0;
  server.prependListener("connection", (socket: Socket) => {
    const who = (socket.remoteAddress ?? "").replace(/^::ffff:/, "");
    const mine = open.get(who) ?? 0;
    if ((limits.maxConnections > 0 && all >= limits.maxConnections) || (limits.maxConnectionsPerClient > 0 && mine >= limits.maxConnectionsPerClient)) {
      refused.add(socket);
      socket.on("error", () => undefined);
      socket.end(BUSY, () => socket.destroy());
      return;
    }
    all++;
    open.set(who, mine + 1);
    socket.once("close", () => {
      all--;
      const left = (open.get(who) ?? 1) - 1;
      if (left > 0) open.set(who, left);
      else open.delete(who);
    });
  });
  return (socket) => refused.has(socket);
}
