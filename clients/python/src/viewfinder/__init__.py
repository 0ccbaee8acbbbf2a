"""Viewfinder's Python client: captures (synchronous and asynchronous), signed render links, webhook
verification and the hosted management API (sites, keys, monitors, usage).

>>> from viewfinder import Viewfinder
>>> client = Viewfinder(api_key="vf_...", base_url="https://viewfinder.example.com")
>>> client.screenshots.create_image({"url": "https://example.com"}).save("example.png")
"""

from . import types
from ._base import USER_AGENT
from ._client import AsyncViewfinder, Viewfinder
from ._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServiceUnavailableError,
    SignatureVerificationError,
    ViewfinderError,
    WaitTimeoutError,
)
from ._version import __version__
from .render_links import sign_render_link
from .types import WebhookEvent
from .webhooks import SIGNATURE_HEADER, sign_webhook, verify_webhook

__all__ = [
    "__version__", "USER_AGENT", "Viewfinder", "AsyncViewfinder", "types", "WebhookEvent",
    "sign_render_link", "verify_webhook", "sign_webhook", "SIGNATURE_HEADER",
    "ViewfinderError", "APIError", "InvalidRequestError", "AuthenticationError", "PermissionDeniedError",
    "NotFoundError", "ConflictError", "RateLimitError", "ServiceUnavailableError", "APIConnectionError",
    "APITimeoutError", "WaitTimeoutError", "SignatureVerificationError",
]
