// The interface document's redirect (iFrame) page: a loading page with an empty form `theForm` whose script, on
// load, appends one hidden input per name/value pair and submits it to the hosted checkout.
// The pairs travel as JSON data (jsonForScript) and become inputs through DOM properties, so no
// request value is ever parsed as HTML or script.
import { escapeHtml, jsonForScript } from "../base/markup.js";
import { cspHash, page, PAGE_STYLE } from "./html.js";

const CHECKOUT_PAGE_TITLE = "Loading...";
/** id of the JSON data block that holds the hidden inputs as [name, value] pairs */
export const CHECKOUT_INPUTS_ID = "theFormInputs";

// HTMLFormElement.prototype.submit: an input named "submit" would shadow form.submit.
const SCRIPT = `(function () {
  function send() {
    var form = document.getElementById("theForm");
    var pairs = JSON.parse(document.getElementById("${CHECKOUT_INPUTS_ID}").textContent);
    for (var i = 0; i < pairs.length; i++) {
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = pairs[i][0];
      input.value = pairs[i][1];
      form.appendChild(input);
    }
    HTMLFormElement.prototype.submit.call(form);
  }
  if (document.readyState === "complete") send();
  else window.addEventListener("load", send);
})();`;

/**
 * The policy of the HTML answers of the gateway's operations (this loading page, an HTML refusal):
 * nothing but their own inline style and script, allowed by hash; the form may post on (to the
 * hosted checkout). No frame-ancestors: the redirect payment is an iFrame payment.
 */
export const GATEWAY_PAGE_CSP = `default-src 'none'; style-src ${cspHash(PAGE_STYLE)}; script-src ${cspHash(`\n${SCRIPT}\n`)}; base-uri 'none'`;

export function checkoutPage(action: string, inputs: readonly (readonly [string, string])[]): string {
  return page(
    CHECKOUT_PAGE_TITLE,
    `<p>Loading...</p>
<form name="theForm" id="theForm" method="POST" action="${escapeHtml(action)}"></form>
<noscript><p class="error">JavaScript is needed to continue to the checkout.</p></noscript>
<script type="application/json" id="${CHECKOUT_INPUTS_ID}">${jsonForScript(inputs)}</script>
<script>
${SCRIPT}
</script>`,
  );
}
