"""Scenarios, outcomes and the clock, driven over plain HTTP as a CI job in any language would."""

from conftest import operator, order_no

CARD = "4242424242424242"


def test_a_merchant_bound_to_the_declines_scenario_is_declined_then_approved_once_unbound(own_merchant):
    merchant = own_merchant.identity["merchant_id"]
    assert own_merchant.pay_by_card(order_no("PY-FIRST"), "10.00", "EUR", CARD)["approved"]
    operator("PUT", f"/scenarios/bindings/{merchant}", {"name": "declines"})
    assert not own_merchant.pay_by_card(order_no("PY-BOUND"), "10.00", "EUR", CARD)["approved"]
    operator("DELETE", f"/scenarios/bindings/{merchant}")
    assert own_merchant.pay_by_card(order_no("PY-UNBOUND"), "10.00", "EUR", CARD)["approved"]


def test_a_request_names_its_outcome_with_x_sandbox_outcome(shop):
    payment = shop.pay_by_card(order_no("PY-OUT"), "10.00", "USD", CARD, headers={"X-Sandbox-Outcome": "insufficient_funds"})
    assert payment["result_info"] == "D0051:Insufficient funds"


def test_a_refund_that_settles_in_an_hour_settles_when_the_merchants_clock_moves_two_hours(own_merchant):
    no = order_no("PY-CLOCK")
    payment = own_merchant.pay_by_card(no, "30.00", "USD", CARD)
    order = {"transaction_id": payment["transaction_id"], "order_no": no, "currency": "USD", "amount": "30.00"}
    own_merchant.capture(order)
    refund = own_merchant.refund(order, "5.17", "late delivery")  # .17 settles an hour after it is accepted
    [before] = own_merchant.refunds_of(no)
    assert before["refund_status"] == "1" and before["refund_processing_date"] == ""
    moved = operator("POST", "/clock", {"advance": "2h", "merchant_id": own_merchant.identity["merchant_id"]})
    assert moved["applied"] >= 1
    [after] = own_merchant.refunds_of(no)
    assert after["refund_reference_id"] == refund["reference"] and after["refund_processing_date"] != ""
