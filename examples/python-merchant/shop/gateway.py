"""The shop's integration of the payment gateway, in plain Python with requests: it signs every
request, pays by card, by the hosted checkout and by 3-D Secure, captures, refunds, queries,
pays out, and checks the gateway's signature on every answer and on the payer's return. Nothing
here knows about Sandgate: point it at the real gateway and it works the same."""

import hashlib
import hmac
import re
import xml.etree.ElementTree as ET
from urllib.parse import parse_qsl, urlsplit

import requests

# The fields each signature covers, in order, from the gateway's documentation (docs/signatures.md).
AUTHORISE_REQUEST = ["merchant_id", "account_id", "order_no", "currency", "amount", "first_name", "last_name",
                     "card", "expiration_year", "expiration_month", "security_code", "shopper_email"]
AUTHORISE_ANSWER = ["merchant_id", "account_id", "order_no", "currency", "amount", "transaction_id", "order_status", "result_info"]
ENVELOPE_REQUEST = ["merchant_id", "account_id"]
ENVELOPE_ANSWER = ["merchant_id", "account_id", "return_status"]
PAYOUT_REQUEST = ["merchant_id", "account_id", "request_id", "payment_amount", "payment_currency"]
PAYOUT_ANSWER = ["merchant_id", "account_id", "request_id", "transaction_id", "status"]


class GatewayError(Exception):
    """The gateway's answer cannot be trusted (its signature is not ours) or is not what was asked."""


def sign(fields, values, secret_key):
    """SHA-256 (lowercase hex) of the listed fields' values concatenated, then the secret key; a missing field is empty."""
    text = "".join("" if values.get(f) is None else str(values.get(f)) for f in fields)
    return hashlib.sha256((text + secret_key).encode("utf-8")).hexdigest()


def signed_by(fields, values, secret_key):
    """Whether values' encryption_data is the key's signature of them (a constant-time comparison)."""
    return hmac.compare_digest(str(values.get("encryption_data", "")), sign(fields, values, secret_key))


def read_xml(text):
    """The text children of the gateway's <respon> answer."""
    return {child.tag: (child.text or "") for child in ET.fromstring(text) if len(child) == 0}


class Gateway:
    def __init__(self, base_url, merchant_id, account_id, secret_key, session=None):
        self.base_url = base_url.rstrip("/")
        self.identity = {"merchant_id": merchant_id, "account_id": account_id}
        self.key = secret_key
        self.http = session or requests.Session()

    def _post(self, path, body, request_fields, headers=None):
        body = {**self.identity, **body}
        body["encryption_data"] = sign(request_fields, body, self.key)
        return self.http.post(f"{self.base_url}{path}", json=body, headers=headers or {}, timeout=30)

    def _checked(self, answer, fields, what):
        if not signed_by(fields, answer, self.key):
            raise GatewayError(f"the gateway's {what} answer is not signed with our key")
        return answer

    def pay_by_card(self, order_no, amount, currency, card, cvc="123", expiry=("12", "2030"), notify_url=None, headers=None):
        """A direct card payment: approved, declined, or waiting for 3-D Secure (challenge_url)."""
        body = {"order_no": order_no, "currency": currency, "amount": amount, "card": card, "security_code": cvc,
                "expiration_month": expiry[0], "expiration_year": expiry[1], "first_name": "Jane", "last_name": "Doe",
                "shopper_email": "jane@example.com"}
        if notify_url:
            body["notify_url"] = notify_url
        answer = self._checked(read_xml(self._post("/v1/authorise", body, AUTHORISE_REQUEST, headers).text), AUTHORISE_ANSWER, "authorise")
        return {"status": answer["order_status"], "approved": answer["order_status"] == "1", "result_info": answer["result_info"],
                "transaction_id": answer["transaction_id"], "challenge_url": answer.get("issuer_url", "")}

    def start_checkout(self, order_no, amount, currency, return_url):
        """The hosted checkout: where the gateway's loading page sends the payer."""
        page = self._post("/v1/checkout", {"order_no": order_no, "currency": currency, "amount": amount, "return_url": return_url},
                          AUTHORISE_REQUEST).text
        found = re.search(r'<form[^>]*id="theForm"[^>]*action="([^"]+)"|<form[^>]*action="([^"]+)"[^>]*id="theForm"', page)
        if not found:
            raise GatewayError("the checkout page has no form to the hosted checkout")
        return (found.group(1) or found.group(2)).replace("&amp;", "&")

    def read_return(self, return_url):
        """The payer's return to return_url: trusted only when its signature is ours."""
        params = dict(parse_qsl(urlsplit(return_url).query))
        if not signed_by(AUTHORISE_ANSWER, params, self.key):
            raise GatewayError("the payer's return is not signed with our key: ignore it")
        return {"paid": params["order_status"] == "1", "order_no": params["order_no"], "transaction_id": params["transaction_id"]}

    def _batch(self, operation, list_field, orders):
        answer = self._checked(self._post(f"/v1/{operation}", {list_field: orders}, ENVELOPE_REQUEST).json(), ENVELOPE_ANSWER, operation)
        return answer[list_field]

    def capture(self, order, amount=None):
        [result] = self._batch("capture", "capture_orders", [{**order, "amount": amount or order["amount"]}])
        return {"captured": result.get("capture_status") == "1", "message": result.get("error_message", "")}

    def refund(self, order, amount, reason):
        [result] = self._batch("refund", "refund_orders", [{**order, "refund_amount": amount, "refund_reason": reason}])
        return {"accepted": result.get("refund_status") == "1", "reference": result.get("refund_reference_id", ""), "message": result.get("refund_message", "")}

    def query(self, order_no):
        answer = self._checked(self._post("/v1/retrievalTrans", {"order_no": order_no}, ENVELOPE_REQUEST).json(), ENVELOPE_ANSWER, "query")
        return answer["orders_list"]

    def refunds_of(self, order_no):
        answer = self._checked(self._post("/v1/retrievalRefund", {"order_no": order_no}, ENVELOPE_REQUEST).json(), ENVELOPE_ANSWER, "refund search")
        return answer["refund_orders"]

    def payout(self, request_id, amount, currency, account_number, notify_url=None):
        body = {"request_id": request_id, "payment_currency": currency, "payment_amount": amount, "payment_method": "SWIFT",
                "beneficiary": {"first_name": "Ann", "last_name": "Lee", "bank_details": {"account_number": account_number, "bank_country_code": "DE", "swift_code": "DEUTDEFF"}}}
        if notify_url:
            body["notify_url"] = notify_url
        return self._checked(self._post("/v1/payout", body, PAYOUT_REQUEST).json(), PAYOUT_ANSWER, "payout")
