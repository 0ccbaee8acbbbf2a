"""What the synchronous and the asynchronous client share: configuration, the operations (each a
request and how to read its answer), the retry rule and the reading of answers. Only sending and
sleeping differ between the two clients (_client.py)."""

from __future__ import annotations

import json
import os
import platform
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, List, Literal, Mapping, Optional, Sequence, TypeVar, Union
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from . import types as t
from ._errors import APIConnectionError, APITimeoutError, ViewfinderError, error_for, parse_retry_after
from ._version import __version__

T = TypeVar("T")
Mode = Literal["hosted", "self-hosted"]

USER_AGENT = f"viewfinder-python/{__version__} httpx/{httpx.__version__} Python/{platform.python_version()}"
DEFAULT_TIMEOUT = 90.0  # a capture may take the server's whole CAPTURE_TIMEOUT_MS (53 s by default)
DEFAULT_MAX_RETRIES = 2
MAX_RETRY_AFTER = 60.0  # a Retry-After beyond this is not waited for: the error is raised instead
RETRY_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class Operation(Generic[T]):
    """One API call: the request to send and how to read a successful answer."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    json: Any = None
    headers: Dict[str, str] = field(default_factory=dict)
    hosted_only: bool = False


def _json(response: httpx.Response) -> Any:
    return response.json()


def _model(cls: "type[T]") -> Callable[[httpx.Response], T]:
    return lambda response: t.from_json(cls, response.json())


def _models(cls: "type[T]", member: Optional[str] = None) -> Callable[[httpx.Response], List[T]]:
    def parse(response: httpx.Response) -> List[T]:
        data = response.json()
        return [t.from_json(cls, item) for item in (data[member] if member else data)]

    return parse


def _header_int(headers: httpx.Headers, name: str) -> Optional[int]:
    value = headers.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _header_bool(headers: httpx.Headers, name: str) -> Optional[bool]:
    value = headers.get(name)
    return None if value is None else value.lower() == "true"


def _image(response: httpx.Response) -> t.Image:
    h = response.headers
    return t.Image(
        data=response.content,
        content_type=h.get("content-type", "").split(";")[0],
        url=h.get("viewfinder-url"),
        quality=h.get("viewfinder-quality"),
        width=_header_int(h, "viewfinder-width"),
        height=_header_int(h, "viewfinder-height"),
        file_size=_header_int(h, "viewfinder-file-size"),
        processing_time_ms=_header_int(h, "viewfinder-processing-time-ms"),
        wait_ms=_header_int(h, "viewfinder-wait-ms"),
        truncated=_header_bool(h, "viewfinder-truncated"),
        cached=_header_bool(h, "viewfinder-cached"),
        site_id=h.get("viewfinder-site-id"),
        headers=dict(h),
    )


_ACCEPT_BY_FORMAT = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp", "pdf": "application/pdf"}


def _accept_image(options: Mapping[str, Any]) -> str:
    return _ACCEPT_BY_FORMAT.get(str(options.get("format") or "png"), "image/png")


def _seg(value: str) -> str:
    """An id as one path segment: an id with a slash cannot reach another route."""
    return quote(str(value), safe="")


def _idempotency(key: Optional[str]) -> Dict[str, str]:
    return {"Idempotency-Key": key} if key else {}


class Operations:
    """Every operation of the API, for one mode (hosted: /api/...; self-hosted: /screenshot, /captures)."""

    def __init__(self, mode: Mode) -> None:
        self.prefix = "/api" if mode == "hosted" else ""

    # Captures
    def screenshot(self, options: Mapping[str, Any]) -> Operation[t.Screenshot]:
        return Operation("POST", f"{self.prefix}/screenshot", _model(t.Screenshot), json=dict(options), headers={"Accept": "application/json"})

    def screenshot_image(self, options: Mapping[str, Any]) -> Operation[t.Image]:
        return Operation("POST", f"{self.prefix}/screenshot", _image, json=dict(options), headers={"Accept": _accept_image(options)})

    def submit(self, options: Mapping[str, Any], idempotency_key: Optional[str]) -> Operation[t.AcceptedCapture]:
        return Operation("POST", f"{self.prefix}/captures", _model(t.AcceptedCapture), json=dict(options), headers=_idempotency(idempotency_key))

    def submit_batch(self, captures: Sequence[Mapping[str, Any]], idempotency_key: Optional[str]) -> Operation[List[t.AcceptedCapture]]:
        body = {"captures": [dict(c) for c in captures]}
        return Operation("POST", f"{self.prefix}/captures", _models(t.AcceptedCapture, "captures"), json=body, headers=_idempotency(idempotency_key))

    def capture(self, capture_id: str) -> Operation[t.Capture]:
        return Operation("GET", f"{self.prefix}/captures/{_seg(capture_id)}", _model(t.Capture), headers={"Accept": "application/json"})

    def capture_image(self, capture_id: str, accept: str) -> Operation[t.Image]:
        return Operation("GET", f"{self.prefix}/captures/{_seg(capture_id)}", _image, headers={"Accept": accept})

    # Management (hosted only)
    def _manage(self, method: str, path: str, parse: Callable[[httpx.Response], T], body: Any = None) -> Operation[T]:
        return Operation(method, f"/api{path}", parse, json=None if body is None else dict(body), hosted_only=True)

    def list_sites(self) -> Operation[List[t.Site]]:
        return self._manage("GET", "/sites", _models(t.Site, "sites"))

    def create_site(self, params: Mapping[str, Any]) -> Operation[t.Site]:
        return self._manage("POST", "/sites", _model(t.Site), params)

    def get_site(self, site_id: str) -> Operation[t.Site]:
        return self._manage("GET", f"/sites/{_seg(site_id)}", _model(t.Site))

    def update_site(self, site_id: str, params: Mapping[str, Any]) -> Operation[t.Site]:
        return self._manage("PATCH", f"/sites/{_seg(site_id)}", _model(t.Site), params)

    def delete_site(self, site_id: str) -> Operation[t.Deleted]:
        return self._manage("DELETE", f"/sites/{_seg(site_id)}", _model(t.Deleted))

    def list_destinations(self) -> Operation[List[t.Destination]]:
        return self._manage("GET", "/destinations", _models(t.Destination, "destinations"))

    def create_destination(self, params: Mapping[str, Any]) -> Operation[t.Destination]:
        return self._manage("POST", "/destinations", _model(t.Destination), params)

    def get_destination(self, name: str) -> Operation[t.Destination]:
        return self._manage("GET", f"/destinations/{_seg(name)}", _model(t.Destination))

    def update_destination(self, name: str, params: Mapping[str, Any]) -> Operation[t.Destination]:
        return self._manage("PATCH", f"/destinations/{_seg(name)}", _model(t.Destination), params)

    def delete_destination(self, name: str) -> Operation[t.Deleted]:
        return self._manage("DELETE", f"/destinations/{_seg(name)}", _model(t.Deleted))

    def list_keys(self) -> Operation[List[t.ApiKey]]:
        return self._manage("GET", "/keys", _models(t.ApiKey, "keys"))

    def create_key(self, params: Mapping[str, Any]) -> Operation[t.CreatedApiKey]:
        return self._manage("POST", "/keys", _model(t.CreatedApiKey), params)

    def regenerate_key(self, key_id: str) -> Operation[t.CreatedApiKey]:
        return self._manage("POST", f"/keys/{_seg(key_id)}/regenerate", _model(t.CreatedApiKey))

    def delete_key(self, key_id: str) -> Operation[t.Deleted]:
        return self._manage("DELETE", f"/keys/{_seg(key_id)}", _model(t.Deleted))

    def usage(self) -> Operation[t.Usage]:
        return self._manage("GET", "/usage", _model(t.Usage))

    def list_monitors(self) -> Operation[List[t.Monitor]]:
        return self._manage("GET", "/monitors", _models(t.Monitor))

    def create_monitor(self, params: Mapping[str, Any]) -> Operation[t.Monitor]:
        return self._manage("POST", "/monitors", _model(t.Monitor), params)

    def get_monitor(self, monitor_id: str) -> Operation[t.Monitor]:
        return self._manage("GET", f"/monitors/{_seg(monitor_id)}", _model(t.Monitor))

    def update_monitor(self, monitor_id: str, params: Mapping[str, Any]) -> Operation[t.Monitor]:
        return self._manage("PATCH", f"/monitors/{_seg(monitor_id)}", _model(t.Monitor), params)

    def delete_monitor(self, monitor_id: str) -> Operation[t.Deleted]:
        return self._manage("DELETE", f"/monitors/{_seg(monitor_id)}", _model(t.Deleted))

    def run_monitor(self, monitor_id: str) -> Operation[t.MonitorRunStarted]:
        return self._manage("POST", f"/monitors/{_seg(monitor_id)}/runs", _model(t.MonitorRunStarted))

    def list_monitor_runs(self, monitor_id: str) -> Operation[List[t.MonitorRun]]:
        return self._manage("GET", f"/monitors/{_seg(monitor_id)}/runs", _models(t.MonitorRun))

    def get_monitor_run(self, monitor_id: str, run_id: str) -> Operation[t.MonitorRunWithReports]:
        return self._manage("GET", f"/monitors/{_seg(monitor_id)}/runs/{_seg(run_id)}", _model(t.MonitorRunWithReports))

    def accept_baseline(self, monitor_id: str, params: Mapping[str, Any]) -> Operation[t.Monitor]:
        return self._manage("POST", f"/monitors/{_seg(monitor_id)}/baseline", _model(t.Monitor), params)

    def monitor_image(self, monitor_id: str, image_id: str) -> Operation[bytes]:
        return self._manage("GET", f"/monitors/{_seg(monitor_id)}/images/{_seg(image_id)}", lambda r: r.content)


@dataclass(frozen=True)
class Retry:
    """Send the request again after ``delay`` seconds."""

    delay: float


class BaseClient:
    """Configuration, request building and the retry rule; never holds the key in its repr."""

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        base_url: Optional[str] = None,
        mode: Mode = "hosted",
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_after: float = MAX_RETRY_AFTER,
        http_client: Any = None,
    ) -> None:
        """``api_key`` and ``base_url`` default to ``VIEWFINDER_API_KEY`` and ``VIEWFINDER_URL``;
        ``http_client`` is an ``httpx.Client`` (``httpx.AsyncClient`` for the asyncio client) of your
        own, for proxies or certificates, which the client then leaves open."""
        if mode not in ("hosted", "self-hosted"):
            raise ValueError('mode is "hosted" or "self-hosted"')
        base_url = base_url or os.environ.get("VIEWFINDER_URL")
        if not base_url:
            raise ViewfinderError("No base URL: pass base_url= or set VIEWFINDER_URL")
        if api_key is None:
            api_key = os.environ.get("VIEWFINDER_API_KEY")
        if api_key is None and mode == "hosted":
            raise ViewfinderError("No API key: pass api_key= or set VIEWFINDER_API_KEY")
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.mode: Mode = mode
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_after = max_retry_after
        self._ops = Operations(mode)
        self._owns_http = http_client is None
        self._setup(http_client)

    def _setup(self, http_client: Any) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={_redact_url(self.base_url)!r}, mode={self.mode!r})"

    def _options(self) -> Dict[str, Any]:
        return {"base_url": self.base_url, "mode": self.mode, "timeout": self.timeout, "max_retries": self.max_retries, "max_retry_after": self.max_retry_after}

    def build_request(self, http: Union[httpx.Client, httpx.AsyncClient], op: Operation[Any]) -> httpx.Request:
        if op.hosted_only and self.mode != "hosted":
            raise ViewfinderError(f"{op.method} {op.path} is part of the hosted management API; this client is self-hosted")
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self._api_key:
            headers["X-API-Key"] = self._api_key
        headers.update(op.headers)
        content = None
        if op.json is not None:
            headers["Content-Type"] = "application/json"
            content = json.dumps(op.json, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        return http.build_request(op.method, self.base_url + op.path, headers=headers, content=content, timeout=self.timeout)

    def retry_delay(self, attempt: int, response: Optional[httpx.Response]) -> Optional[float]:
        """Seconds to wait before attempt ``attempt + 1``, or None to stop: only 429 and 503 (and a
        connection that was never made, response None) are retried, after ``Retry-After`` when the
        service gives one, else after an exponential backoff with jitter."""
        if attempt >= self.max_retries:
            return None
        if response is not None:
            if response.status_code not in RETRY_STATUSES:
                return None
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            if retry_after is not None:
                return None if retry_after > self.max_retry_after else retry_after + random.uniform(0, 0.25)
        step: float = min(8.0, 0.5 * 2.0**attempt)
        return step * random.uniform(0.5, 1.0)

    def settle(self, op: Operation[T], attempt: int, response: Optional[httpx.Response], error: Optional[httpx.HTTPError]) -> Union["Retry", T]:
        """After attempt ``attempt``: the result when done, :class:`Retry` to try again after its
        delay; raises the typed error otherwise."""
        if error is not None:
            # Only a connection never made is safe to retry: a capture may be running already.
            delay = self.retry_delay(attempt, None) if isinstance(error, httpx.ConnectError) else None
            if delay is None:
                raise self.connection_error(error) from None
            return Retry(delay)
        assert response is not None
        delay = self.retry_delay(attempt, response)
        return self.read(op, response) if delay is None else Retry(delay)

    def read(self, op: Operation[T], response: httpx.Response) -> T:
        if response.is_success:
            return op.parse(response)
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        raise error_for(response.status_code, body, response.headers)

    def connection_error(self, err: httpx.HTTPError) -> APIConnectionError:
        where = _redact_url(self.base_url)
        if isinstance(err, httpx.TimeoutException):
            return APITimeoutError(f"No answer from {where} within {self.timeout} s ({type(err).__name__})")
        return APIConnectionError(f"Could not reach {where}: {type(err).__name__}: {err}")


def _redact_url(url: str) -> str:
    """The URL without userinfo, so that a base URL with credentials never reaches a message."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[1], parts.path, parts.query, parts.fragment))
