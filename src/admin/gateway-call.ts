// A gateway request made from inside this server, for the dashboard's QA playground. It is a real
// HTTP request (Node's own client and server, over a connection held in memory instead of a TCP
// socket) answered by the gateway's own handler (http/operation.ts gatewayOperations: read body →
// caller → signature → decide → operation.handle → commit → render → request log → faults). So a
// playground payment is decided, stored, logged and answered exactly as a merchant's is; only the
// merchant is the tester's browser, through the dashboard.
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { Duplex } from "node:stream";

/** One end of a connection held in memory: what one end writes, the other reads. */
class MemoryEnd extends Duplex {
  other: MemoryEnd | undefined;
  /** the address the server side reports as its client's (req.socket.remoteAddress: the request log's ip) */
  remoteAddress: string | undefined;

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.other?.push(chunk);
    done();
  }

  override _final(done: (err?: Error | null) => void): void {
    this.other?.push(null);
    done();
  }

  override _read(): void {}

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    // one end closing closes the other, as a reset TCP connection does
    if (this.other && !this.other.destroyed) this.other.destroy();
    done(err);
  }
}

function connection(clientAddress: string): { client: MemoryEnd; server: MemoryEnd } {
  const client = new MemoryEnd();
  const server = new MemoryEnd();
  client.other = server;
  server.other = client;
  server.remoteAddress = clientAddress;
  return { client, server };
}

export interface GatewayRequest {
  /** e.g. /v1/authorise */
  path: string;
  /** sent as JSON */
  body: Record<string, string>;
  /** Host: what the gateway builds its page links from when --base-url is not set */
  host: string;
  /** the client's address as the gateway's request log records it */
  clientAddress: string;
  headers?: Record<string, string>;
  /** how long to wait for the answer (a scenario may make the gateway hang) */
  timeoutMs: number;
}

export type GatewayAnswer =
  | { status: number; headers: IncomingHttpHeaders; body: string }
  /** reset: the connection was closed without an answer; timeout: no answer in time */
  | { failure: "reset" | "timeout" };

export type GatewayListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Sends requests to `listener` (the gateway's handler) as HTTP over in-memory connections. */
export function gatewayCaller(listener: GatewayListener): (call: GatewayRequest) => Promise<GatewayAnswer> {
  const server = createServer(listener);
  return (call) =>
    new Promise<GatewayAnswer>((resolve) => {
      const { client, server: serverEnd } = connection(call.clientAddress);
      server.emit("connection", serverEnd);
      const payload = JSON.stringify(call.body);
      let settled = false;
      const settle = (answer: GatewayAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        client.destroy();
        resolve(answer);
      };
      const timer = setTimeout(() => settle({ failure: "timeout" }), call.timeoutMs);
      const req = request(
        {
          createConnection: () => client as unknown as Socket,
          method: "POST",
          path: call.path,
          headers: { ...call.headers, host: call.host, "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => settle({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
          res.on("error", () => settle({ failure: "reset" }));
        },
      );
      req.on("error", () => settle({ failure: "reset" }));
      req.end(payload);
    });
}
