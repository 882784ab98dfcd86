// Slow clients cost their own socket only. The HTTP server's deadlines: the headers within
// --header-timeout-ms (Node's, checked every half second), the body within --body-timeout-ms while
// Sandgate reads it (408 and closed: a request Sandgate holds unread, a verify waiting its turn, is
// not the client's delay), an idle keep-alive socket closed after --idle-timeout-ms. And a cap on
// the sockets open at once, from one client address (--max-connections-per-client) and in all
// (--max-connections): a socket past either is answered 503 with Retry-After and closed at once, so
// one client holding thousands of sockets cannot take the process's open files from everyone.
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

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
 * a timer per request (set and cleared on every request, on the hot path). They are
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
