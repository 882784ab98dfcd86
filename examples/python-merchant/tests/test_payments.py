"""The shop's payment flows against Sandgate: each answer's signature is checked by the shop."""

import uuid

import pytest
import requests

from conftest import URL, order_no
from shop.gateway import AUTHORISE_ANSWER, GatewayError, signed_by

CARD = "4242424242424242"


def test_a_card_payment_is_approved_and_its_answer_is_signed_with_our_key(shop):
    payment = shop.pay_by_card(order_no("PY-CARD"), "49.90", "USD", CARD)
    assert payment["approved"] and payment["result_info"] == "0000:Success"


def test_a_declined_card_and_a_capture_of_it_refused(shop):
    no = order_no("PY-DECL")
    payment = shop.pay_by_card(no, "20.00", "USD", "4000000000000002")
    assert not payment["approved"] and payment["result_info"].startswith("D0005:")
    capture = shop.capture({"transaction_id": payment["transaction_id"], "order_no": no, "currency": "USD", "amount": "20.00"})
    assert not capture["captured"] and capture["message"].startswith("E")


def test_three_d_secure_the_payer_passes_the_challenge(shop):
    no = order_no("PY-3DS")
    payment = shop.pay_by_card(no, "30.00", "USD", "4000002760003184")
    assert payment["status"] == "-1" and payment["challenge_url"]
    # the payer at the issuer's page types the code (docs: 1234 passes)
    answer = requests.post(payment["challenge_url"], data={"challenge_code": "1234"}, headers={"accept": "application/json"}, timeout=30).json()
    assert answer["order_status"] == "1"
    [found] = shop.query(no)
    assert found["payment_status"] == "2000"  # authorised: A10001 captures by hand


def test_the_hosted_checkout_sends_the_payer_back_signed(shop):
    no = order_no("PY-CO")
    page = shop.start_checkout(no, "15.00", "USD", "https://shop.example/return")
    paid = requests.post(page, data={"card": CARD, "expiration_month": "12", "expiration_year": "2031", "security_code": "123",
                                     "holder_name": "Jane Payer"}, allow_redirects=False, timeout=30)
    assert paid.status_code == 303
    back = paid.headers["location"]
    returned = shop.read_return(back)
    assert returned["paid"] and returned["order_no"] == no and returned["transaction_id"]
    with pytest.raises(GatewayError):
        shop.read_return(back.replace("amount=15.00", "amount=0.01"))


def test_partial_capture_partial_refund_then_the_query_and_the_refund_search(shop):
    no = order_no("PY-PART")
    payment = shop.pay_by_card(no, "50.00", "USD", CARD)
    order = {"transaction_id": payment["transaction_id"], "order_no": no, "currency": "USD", "amount": "50.00"}
    assert shop.capture(order, amount="30.00")["captured"]
    refund = shop.refund(order, "10.00", "one item returned")
    assert refund["accepted"] and refund["reference"]
    [found] = shop.query(no)
    assert found["order_no"] == no and found["payment_status"] == "4000"  # partially refunded
    [listed] = shop.refunds_of(no)
    assert (listed["refund_reference_id"], listed["refund_amount"], listed["amount"]) == (refund["reference"], "10.00", "50.00")


def test_a_payout_to_a_bank_account(shop):
    answer = shop.payout(str(uuid.uuid4()), "100.00", "EUR", "12345678")
    assert answer["status"] in ("COMPLETED", "PENDING") and answer["transaction_id"].startswith("PO")


def test_an_answer_someone_else_signed_is_refused():
    answer = {"merchant_id": "M10001", "account_id": "A10001", "order_no": "X", "currency": "USD", "amount": "1.00",
              "transaction_id": "1", "order_status": "1", "result_info": "0000:Success", "encryption_data": "0" * 64}
    assert not signed_by(AUTHORISE_ANSWER, answer, "acme_test_key_7f3a9c21")
    assert requests.get(f"{URL}/__sandbox/health", timeout=30).json()["status"] == "ok"
