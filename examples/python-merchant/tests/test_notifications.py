"""The shop's notify_url: a real HTTP receiver, Sandgate's notifications delivered to it; a forged or
replayed one is refused."""

import copy
from datetime import datetime

import pytest

from conftest import ACME, operator, order_no
from shop.receiver import Receiver, verdict


@pytest.fixture
def receiver():
    r = Receiver(ACME[2])
    yield r
    r.close()


def test_the_payments_notification_arrives_signed_and_a_forged_or_replayed_one_is_refused(shop, receiver):
    no = order_no("PY-NOTE")
    shop.pay_by_card(no, "12.00", "USD", "4242424242424242", notify_url=receiver.url)
    operator("POST", "/notifications/deliver", {})
    [note] = [n for n in receiver.processed if n["data"].get("order_no") == no]
    assert note["event"] == "payment.authorised"

    forged = copy.deepcopy(note)
    forged["data"]["amount"] = "0.01"
    assert verdict(forged, ACME[2], set()) == (401, "not signed with our key")
    # the same notification again: acknowledged, not processed twice
    assert verdict(note, ACME[2], receiver.seen) == (200, "duplicate")
    # captured and replayed ten minutes later: its sent_at is stale
    later = datetime.fromisoformat(note["sent_at"].replace("Z", "+00:00")).timestamp() + 600
    assert verdict(note, ACME[2], set(), now=later) == (400, "stale: sent too long ago")
