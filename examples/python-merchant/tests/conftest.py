"""Where Sandgate is (SANDGATE_URL, as docs/ci.md starts it: npx sandgate or the Docker image) and
the operator API over plain HTTP: scenarios, outcomes and the clock, no Node on this runner."""

import os
import uuid

import pytest
import requests

from shop.gateway import Gateway

URL = os.environ.get("SANDGATE_URL", "http://127.0.0.1:8080").rstrip("/")
TOKEN = os.environ.get("ADMIN_TOKEN", "")
# a fixture merchant of Sandgate: manual capture on A10001
ACME = ("M10001", "A10001", "acme_test_key_7f3a9c21")


def operator(method, path, body=None):
    """One call of Sandgate's operator API (/__sandbox/...): its JSON, or an error."""
    headers = {"authorization": f"Bearer {TOKEN}"} if TOKEN else {}
    answer = requests.request(method, f"{URL}/__sandbox{path}", json=body, headers=headers, timeout=30)
    answer.raise_for_status()
    return answer.json()


def order_no(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def shop():
    return Gateway(URL, *ACME)


@pytest.fixture
def own_merchant():
    """A merchant of this run only (Sandgate provisions it on first use, its key sk_test_<id>), so a binding touches no one else."""
    merchant_id = f"PY-{uuid.uuid4().hex[:8].upper()}"
    yield Gateway(URL, merchant_id, "WEB", f"sk_test_{merchant_id}")
    requests.delete(f"{URL}/__sandbox/scenarios/bindings/{merchant_id}", timeout=30)
