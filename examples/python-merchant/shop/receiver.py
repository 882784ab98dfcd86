"""The shop's notify_url: verifies each notification's signature before trusting anything in it,
refuses one sent too long ago (sent_at, signed anew on every attempt: a replayed capture is
stale) and acknowledges a notification id it has seen without processing it again."""

import hmac
import json
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from shop.gateway import sign

NOTIFICATION_FIELDS = ["notification_id", "event", "merchant_id", "created_at", "sent_at",
                       "data.transaction_id", "data.order_no", "data.amount", "data.currency", "data.payment_status",
                       "data.refund_reference_id", "data.refund_amount", "data.refund_status", "data.request_id",
                       "data.payment_amount", "data.payment_currency", "data.status", "data.failure_type",
                       "data.recurring_id", "data.recurring_status"]
TOLERANCE_SECONDS = 300


def flat(body):
    """The notification's signed values: "data.x" is the field x of data."""
    data = body.get("data") if isinstance(body.get("data"), dict) else {}
    return {f: (data.get(f[5:]) if f.startswith("data.") else body.get(f)) for f in NOTIFICATION_FIELDS}


def verdict(body, key, seen, now=None):
    """What the receiver answers: 200 processed, 200 duplicate, 401 not ours, 400 stale or unreadable."""
    if not isinstance(body, dict) or not isinstance(body.get("encryption_data"), str):
        return 400, "unreadable"
    if not hmac.compare_digest(body["encryption_data"], sign(NOTIFICATION_FIELDS, flat(body), key)):
        return 401, "not signed with our key"
    try:
        sent = datetime.fromisoformat(str(body["sent_at"]).replace("Z", "+00:00")).timestamp()
    except (KeyError, ValueError):
        return 400, "no sent_at"
    if abs((now or time.time()) - sent) > TOLERANCE_SECONDS:
        return 400, "stale: sent too long ago"
    if body["notification_id"] in seen:
        return 200, "duplicate"
    seen.add(body["notification_id"])
    return 200, "processed"


class Receiver:
    """An HTTP server on a free port of 127.0.0.1 that records what it processed."""

    def __init__(self, key):
        self.key = key
        self.seen = set()
        self.processed = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                status, why = verdict(body, receiver.key, receiver.seen)
                if why == "processed":
                    receiver.processed.append(body)
                self.send_response(status)
                self.end_headers()
                self.wfile.write(why.encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/notify"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
