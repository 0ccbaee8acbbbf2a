"""Webhook signatures (docs/async.md, "Webhooks"), framework-agnostic: raw body in, verified event out.

``Viewfinder-Signature: t=<unix seconds>,v1=<hex>``, where v1 is the HMAC-SHA256 of ``"<t>.<raw body>"``
with the signing secret of the key that submitted the capture. A receiver checks it over the raw
bytes (before any JSON parsing), in constant time, and refuses a timestamp further than a tolerance
from now either way, so that a recorded delivery cannot be replayed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any, Optional, Union

from ._errors import SignatureVerificationError
from .types import WebhookEvent, from_json

__all__ = ["SIGNATURE_HEADER", "DEFAULT_TOLERANCE_SECONDS", "verify_webhook", "verify_signature", "sign_webhook"]

SIGNATURE_HEADER = "Viewfinder-Signature"
DEFAULT_TOLERANCE_SECONDS = 300

Payload = Union[bytes, bytearray, memoryview, str]


def _as_bytes(payload: Payload) -> bytes:
    return payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)


def _signature(secret: str, timestamp: int, payload: bytes) -> bytes:
    return hmac.new(secret.encode("utf-8"), str(timestamp).encode("ascii") + b"." + payload, hashlib.sha256).digest()


def sign_webhook(payload: Payload, secret: str, *, timestamp: Optional[int] = None) -> str:
    """The ``Viewfinder-Signature`` header the service would send for ``payload`` (for tests)."""
    timestamp = int(time.time()) if timestamp is None else int(timestamp)
    return f"t={timestamp},v1={_signature(secret, timestamp, _as_bytes(payload)).hex()}"


def verify_signature(
    payload: Payload,
    header: Optional[str],
    secret: str,
    *,
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> None:
    """Raises :class:`SignatureVerificationError` unless ``header`` signs ``payload`` within ``tolerance``
    seconds of ``now`` (either way). Several ``v1`` entries are allowed: one must match."""
    if not header:
        raise SignatureVerificationError("No Viewfinder-Signature header")
    timestamp: Optional[int] = None
    candidates = []
    for item in header.split(","):
        name, sep, value = item.strip().partition("=")
        if not sep or not name or not value:
            continue
        if name == "t" and timestamp is None:
            timestamp = int(value) if value.isascii() and value.isdigit() else None
            if timestamp is None:
                raise SignatureVerificationError("The signature's timestamp is not a number")
        elif name == "v1":
            candidates.append(value)
    if timestamp is None:
        raise SignatureVerificationError("The signature has no timestamp")
    if not candidates:
        raise SignatureVerificationError("The signature has no v1 entry")
    current = time.time() if now is None else now
    if abs(int(current) - timestamp) > tolerance:
        raise SignatureVerificationError("The signature's timestamp is outside the tolerance (a replay, or a clock off)")
    expected = _signature(secret, timestamp, _as_bytes(payload)).hex()
    # compare_digest on every candidate, whatever the outcome of the others: constant time.
    matched = False
    for candidate in candidates:
        matched |= hmac.compare_digest(candidate.encode("ascii", "replace"), expected.encode("ascii"))
    if not matched:
        raise SignatureVerificationError("No v1 signature matches the payload")


def verify_webhook(
    payload: Payload,
    header: Optional[str],
    secret: str,
    *,
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> WebhookEvent:
    """Verifies a delivery and returns its event; raises :class:`SignatureVerificationError` otherwise.

    ``payload`` is the raw request body (bytes, as received), ``header`` the ``Viewfinder-Signature``
    header's value, ``secret`` the signing secret of the key that submitted the capture.
    """
    verify_signature(payload, header, secret, tolerance=tolerance, now=now)
    try:
        data: Any = json.loads(_as_bytes(payload))
    except ValueError as err:
        raise SignatureVerificationError("The payload is not JSON") from err
    if not isinstance(data, dict):
        raise SignatureVerificationError("The payload is not a JSON object")
    return from_json(WebhookEvent, data)
