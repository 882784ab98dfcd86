// createApp(deps): wires HTTP only. Every gateway operation goes through gatewayOperations, in front
// of the Express app that serves the rest (pages, dashboard, operator API, assets).
import type { IncomingMessage, ServerResponse } from "node:http";
import express, { type NextFunction, type Request, type Response } from "express";
import { operatorApi } from "./operator.js";
import { refuseCrossSite } from "../admin/cross-site.js";
import { checkHost } from "../admin/allowed-hosts.js";
import type { Deps } from "../deps/deps.js";
import { authorise } from "../gateway/authorise.js";
import { cancel } from "../gateway/cancel.js";
import { capture } from "../gateway/capture.js";
import { refund } from "../gateway/refund.js";
import { retrievalRefund } from "../gateway/retrieval-refund.js";
import { review } from "../gateway/review.js";
import { checkout } from "../gateway/checkout.js";
import { retrievalTrans } from "../gateway/retrieval-trans.js";
import { subscriptionCancel } from "../gateway/subscription-cancel.js";
import { paymentMethodsOptimise } from "../gateway/payment-methods-optimise.js";
import { payout } from "../gateway/payout.js";
import type { Operation } from "../http/operation.js";
import { GATEWAY_OPERATION_NAMES, type SignedOperation } from "../domain/gateway-operations.js";
import { gatewayOperations } from "../http/gateway-server.js";
import { payerPages } from "../pages/payer-pages.js";
import { resultInfo } from "../domain/codes.js";
import { assetsDir, packageVersion } from "../base/paths.js";
import { ASSETS_PATH } from "../render/layout.js";
import { openApiDocument } from "../api/openapi-document.js";
import { SANDBOX_PATH } from "../base/paths.js";
import { callPath } from "../api/operator-calls.js";

/** Each operation of the catalogue (domain/gateway-operations.ts) and its handler: the type asks for one per row. */
const HANDLERS: Record<SignedOperation, Operation> = {
  authorise,
  retrievalTrans,
  checkout,
  capture,
  review,
  cancel,
  refund,
  retrievalRefund,
  subscriptionCancel,
  paymentMethodsOptimise,
  payout,
};

/** The gateway's operations with their handlers, in the catalogue's order. */
export const GATEWAY_HANDLERS: readonly Operation[] = GATEWAY_OPERATION_NAMES.map((name) => {
  if (HANDLERS[name].name !== name) throw new Error(`the handler of ${name} is ${HANDLERS[name].name}'s`);
  return HANDLERS[name];
});

/** A request listener: for http.createServer, supertest, or mounting in an Express app. */
export type App = (req: IncomingMessage, res: ServerResponse) => void;

export function createApp(deps: Deps): App {
  // An error no answer was made for (a page's own body parser, a gateway operation failing after
  // its own try): a client error keeps its status, anything else is a 500 without details.
  const failed = (err: unknown, res: ServerResponse) => {
    const status = (err as { status?: unknown }).status;
    const clientError = typeof status === "number" && status >= 400 && status < 500;
    if (!clientError) deps.log.error({ err }, "unhandled error");
    if (res.headersSent) return;
    const reason = !clientError ? "internal_error" : status === 413 ? "body_too_large" : "malformed_body";
    const body = JSON.stringify({ return_status: "0", return_message: resultInfo(reason) });
    res.writeHead(clientError ? status : 500, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body) });
    res.end(body);
  };
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  // answers are never cached by clients, and a weak ETag costs a hash of every body
  app.set("etag", false);
  // whatever Express answers (the JSON API, a redirect's body, a 404) may load and run nothing;
  // pages (sendHtml) replace this with their own policy
  app.use((_req, res, next) => {
    res.setHeader("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'");
    next();
  });
  // the pages' stylesheet and script: public (the login page needs them), outside the admin guard
  app.use(ASSETS_PATH, express.static(assetsDir, { index: false, fallthrough: false, maxAge: "1h" }));
  // the API's description is public, like health: it holds nothing of anyone's
  let openApi: object | undefined;
  // pages name no icon of their own (data:), but a browser opening a JSON or XML answer asks for one
  app.get("/favicon.ico", (_req, res) => res.status(204).end());
  // the table's getOpenApiDocument: mounted here, before the host check (open, like health), with the gateway's handlers
  app.get(callPath("getOpenApiDocument"), (_req, res) => {
    res.json((openApi ??= openApiDocument(GATEWAY_HANDLERS, packageVersion())));
  });
  app.use(SANDBOX_PATH, checkHost(deps.config.allowedHosts, deps.config.baseUrl), refuseCrossSite(deps.config.baseUrl)); // before any unit of work starts
  app.use(payerPages(deps));
  app.use(SANDBOX_PATH, operatorApi(deps));
  app.use((req, res) => {
    res.status(404).json({ return_status: "0", return_message: resultInfo("route_not_found", `${req.method} ${req.path}`) });
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => failed(err, res));
  return gatewayOperations(GATEWAY_HANDLERS, deps, failed, app);
}
