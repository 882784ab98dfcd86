// GET /pay/:kind/:pageId: the pages a payer is sent to (APM issuer_url, 3-D Secure challenge,
// hosted checkout). This first version shows the payment it belongs to; the buttons that finish
// it come with the pages issue.
import { Router } from "express";
import type { Deps } from "../deps.js";
import { codes } from "../codes.js";
import { escapeHtml, page } from "../render/html.js";

const TITLES: Record<string, string> = { apm: "Alternative payment", "3ds": "3-D Secure challenge", checkout: "Hosted checkout" };

export function payerPages(deps: Deps): Router {
  const router = Router();
  router.get("/pay/:kind/:pageId", (req, res) => {
    const title = TITLES[req.params.kind];
    const tx = title ? deps.store.data.transactions.find((t) => t.page_id === req.params.pageId) : undefined;
    if (!title || !tx) {
      res.status(404).type("html").send(page("Payment page not found", `<h1>Payment page not found</h1><p class="error">No payment page ${escapeHtml(req.params.pageId)}.</p>`));
      return;
    }
    const rows: [string, string][] = [
      ["Merchant", tx.merchant_id],
      ["Order", tx.order_no],
      ["Amount", `${tx.amount} ${tx.currency}`],
      ["Payment method", tx.payment_method],
      ["Transaction", tx.transaction_id],
      ["Payment status", codes.payment_status[tx.state]],
    ];
    const list = rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd data-field="${escapeHtml(k)}">${escapeHtml(v)}</dd>`).join("");
    res.type("html").send(page(`${title} — Sandgate`, `<h1>${escapeHtml(title)}</h1><dl>${list}</dl>`));
  });
  return router;
}
