// Sandgate on node:http: the gateway's operations, in front of the Express app (which serves pages
// and the operator API; the server itself, its deadlines and connection caps, is
// http/connection-limits.ts's serverWithin): a POST to an operation's path, matched as an Express route would be (any case,
// one trailing slash allowed), is found with one map lookup, its body read off the socket
// (body-parser: the size limit, Content-Encoding), handed to the core (operation.ts runOperation)
// as plain data, and the core's answer written back: waiting, hanging or resetting as the
// scenario said.
import bodyParser from "body-parser";
import { GatewayError } from "../domain/codes.js";
import type { Deps } from "../deps/deps.js";
import { GATEWAY_PAGE_CSP } from "../render/checkout-page.js";
import { routePath, runOperation, type GatewayAnswer, type Operation } from "./operation.js";
import type { IncomingMessage, ServerResponse } from "node:http";

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
