"""Typed errors. Each API error carries the HTTP status and the server's own message, never a key."""

from __future__ import annotations

from typing import Any, Mapping, Optional

__all__ = [
    "ViewfinderError", "APIError", "InvalidRequestError", "AuthenticationError", "PermissionDeniedError",
    "NotFoundError", "ConflictError", "RateLimitError", "ServiceUnavailableError", "APIConnectionError",
    "APITimeoutError", "WaitTimeoutError", "SignatureVerificationError",
]


class ViewfinderError(Exception):
    """The base of every error this library raises."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class APIError(ViewfinderError):
    """The service answered with an error status (4xx or 5xx).

    ``status`` is the HTTP status, ``message`` the server's ``error`` text, ``body`` the decoded JSON
    answer (or None), ``headers`` the answer's headers.
    """

    def __init__(self, message: str, *, status: int, body: Any = None, headers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.headers = dict(headers or {})

    def __str__(self) -> str:
        return f"{self.status}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, message={self.message!r})"


class InvalidRequestError(APIError):
    """400, 406, 413, 415, 431: the request itself is wrong; sending it again will not help."""


class AuthenticationError(APIError):
    """401: no key, an unknown key, or one regenerated or deleted since."""


class PermissionDeniedError(APIError):
    """403: the key may not do this (a site key on the management API, a domain outside the site's, ...)."""


class NotFoundError(APIError):
    """404: no such site, key, capture, monitor or route for this account."""


class ConflictError(APIError):
    """409: the object is owned by the Kubernetes operator, or the capture has no image (yet)."""


class RateLimitError(APIError):
    """429: the key's rate limit or the render queue is full. ``retry_after`` is in seconds."""

    @property
    def retry_after(self) -> Optional[float]:
        return parse_retry_after(self.headers.get("retry-after"))


class ServiceUnavailableError(APIError):
    """503: no renderer is ready, or the feature is turned off on this service."""

    @property
    def retry_after(self) -> Optional[float]:
        return parse_retry_after(self.headers.get("retry-after"))


class APIConnectionError(ViewfinderError):
    """The service could not be reached, or the connection broke before an answer."""


class APITimeoutError(APIConnectionError):
    """No answer within the client's timeout."""


class WaitTimeoutError(ViewfinderError):
    """``captures.wait()`` gave up before the capture finished; ``capture`` is the last status seen."""

    def __init__(self, message: str, capture: Any) -> None:
        super().__init__(message)
        self.capture = capture


class SignatureVerificationError(ViewfinderError):
    """A webhook whose ``Viewfinder-Signature`` does not verify, or is outside the tolerance."""


_BY_STATUS = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    406: InvalidRequestError,
    409: ConflictError,
    413: InvalidRequestError,
    415: InvalidRequestError,
    429: RateLimitError,
    431: InvalidRequestError,
    503: ServiceUnavailableError,
}


def error_for(status: int, body: Any, headers: Mapping[str, str]) -> APIError:
    message = body.get("error") if isinstance(body, dict) else None
    if not isinstance(message, str) or not message:
        message = f"HTTP {status}"
    return _BY_STATUS.get(status, APIError)(message, status=status, body=body, headers=headers)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds (the service sends delta-seconds; an HTTP date is read too)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime
    import time

    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
