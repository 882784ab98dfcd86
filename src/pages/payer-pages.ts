// /pay/:kind/:pageId: the pages a payer is sent to (APM issuer_url, 3-D Secure challenge,
// hosted checkout). GET shows the payment the page belongs to; POST /pay/checkout/:pageId is
// where the /v1/checkout page's theForm lands, and also says how many parameters arrived.
// The buttons that finish a payment come with the pages issue.
import express, { Router, type NextFunction, type Request, type Response } from "express";
import type { Deps } from "../deps.js";
import { codes } from "../codes.js";
import { escapeHtml, page } from "../render/html.js";
import type { PaymentKind, Transaction } from "../store/types.js";

const PAGES: Record<string, { title: string; kind: PaymentKind }> = {
  apm: { title: "Alternative payment", kind: "apm" },
  "3ds": { title: "3-D Secure challenge", kind: "direct" },
  checkout: { title: "Hosted checkout", kind: "checkout" },
};

function sendError(res: Response, status: number, title: string, message: string): void {
  res.status(status).type("html").send(page(title, `<h1>${escapeHtml(title)}</h1><p class="error">${escapeHtml(message)}</p>`));
}

/** The page's payment, or a 404 page sent and undefined. */
function findPayment(deps: Deps, kind: string, pageId: string, res: Response): { title: string; tx: Transaction } | undefined {
  const spec = PAGES[kind];
  const tx = spec && deps.store.data.transactions.find((t) => t.page_id === pageId && t.kind === spec.kind);
  if (spec && tx) return { title: spec.title, tx };
  sendError(res, 404, "Payment page not found", `No payment page ${pageId}.`);
  return undefined;
}

function sendPaymentPage(res: Response, title: string, tx: Transaction, extra: [string, string][] = []): void {
  const rows: [string, string][] = [
    ["Merchant", tx.merchant_id],
    ["Order", tx.order_no],
    ["Amount", `${tx.amount} ${tx.currency}`],
    ["Payment method", tx.payment_method],
    ["Transaction", tx.transaction_id],
    ["Payment status", codes.payment_status[tx.state]],
    ...extra,
  ];
  const list = rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd data-field="${escapeHtml(k)}">${escapeHtml(v)}</dd>`).join("");
  res.type("html").send(page(`${title} — Sandgate`, `<h1>${escapeHtml(title)}</h1><dl>${list}</dl>`));
}

/** The form body of theForm; a body the parser refuses (too large, bad charset) gets an HTML page. */
function readForm() {
  const urlencoded = express.urlencoded({ extended: true, limit: "1mb" });
  return (req: Request, res: Response, next: NextFunction) =>
    urlencoded(req, res, (err?: unknown) => {
      if (!err) return next();
      const status = (err as { status?: number }).status ?? 400;
      sendError(res, status, "Checkout form refused", (err as Error).message);
    });
}

export function payerPages(deps: Deps): Router {
  const router = Router();
  router.get("/pay/:kind/:pageId", (req, res) => {
    const found = findPayment(deps, req.params.kind, req.params.pageId, res);
    if (found) sendPaymentPage(res, found.title, found.tx);
  });
  router.post("/pay/checkout/:pageId", readForm(), (req: Request<{ pageId: string }>, res: Response) => {
    const found = findPayment(deps, "checkout", req.params.pageId, res);
    const received = req.body && typeof req.body === "object" ? Object.keys(req.body as object).length : 0;
    if (found) sendPaymentPage(res, found.title, found.tx, [["Parameters received", String(received)]]);
  });
  return router;
}
