// The dashboard's Receiver check tab: a tester gives the merchant's notify URL and sees, probe by
// probe, whether the receiver did the safe thing. The page holds only the form: assets/
// receiver-check.js posts it to POST /__sandbox/receiver-checks (admin/receiver-checks.ts) and
// builds the report with textContent only (the URL and the receiver's answers are not ours).
import { BASE, e, frame } from "./frame.js";
import { callPath } from "../api/operator-calls.js";

/** Merchants offered at most: the fixtures come first in the store, provisioned ones after. */
const MERCHANTS_LISTED = 200;

export function receiverCheckPage(merchants: { merchant_id: string; name: string }[]): string {
  const listed = merchants.slice(0, MERCHANTS_LISTED);
  const known = listed.map((m) => `<option value="${e(m.merchant_id)}">${e(m.name)}</option>`).join("");
  return frame(
    "Receiver check",
    "receiver-check",
    `<h1>Receiver check</h1>
<p>Sends the merchant's notify URL valid, duplicate, forged, tampered, stale, out-of-order and malformed notifications, each signed exactly as Sandgate signs its own, and says per probe whether the receiver did the safe thing. Only the URL given is contacted, one probe at a time, and every probe stays in the notifications log.</p>
<form class="card row" id="check-form" data-endpoint="${callPath("checkReceiver")}" data-notifications="${BASE}/ui/notifications">
<div><label for="check-url">Receiver URL</label><input id="check-url" name="url" inputmode="url" autocomplete="off" spellcheck="false" placeholder="http://127.0.0.1:3000/notify" required></div>
<div class="shrink"><label for="check-merchant">Merchant id</label><input id="check-merchant" name="merchant_id" list="check-merchants" value="${e(listed[0]?.merchant_id ?? "")}" autocomplete="off" required></div>
<datalist id="check-merchants">${known}</datalist>
<div class="shrink"><label for="check-transaction">Transaction id (optional)</label><input id="check-transaction" name="transaction_id" autocomplete="off" placeholder="one made for the check"></div>
<div class="shrink"><label for="check-key">Key (optional)</label><input id="check-key" name="key" autocomplete="off" spellcheck="false" placeholder="the merchant's key"></div>
<div class="shrink"><button type="submit" id="check-submit">Check the receiver</button></div>
</form>
<noscript><p class="flash bad">This page runs the check with JavaScript. Without it: <code>curl -H 'Content-Type: application/json' -d '{"url":"…","merchant_id":"…"}' ${callPath("checkReceiver")}</code></p></noscript>
<p class="hint">The same as <code>sandgate check-receiver &lt;url&gt; --merchant &lt;id&gt;</code>; as JSON for scripts: <code>POST ${callPath("checkReceiver")}</code> with <code>{url, merchant_id, transaction_id?, key?}</code>. Without a transaction id, the check makes a payment of its own (card 4242…) for its notifications to describe.</p>
<div id="check-message" role="status"></div>
<div id="check-result"></div>`,
    undefined,
    ["report-dom.js", "receiver-check.js"],
  );
}
