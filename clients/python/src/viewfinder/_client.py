"""The clients: ``Viewfinder`` (blocking) and ``AsyncViewfinder`` (asyncio), each with a resource per
area of the API. Both send the operations of _base.py; they differ only in how they wait."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any, List, Mapping, Optional, Sequence, TypeVar, Union

import httpx

from . import types as t
from ._base import BaseClient, Operation, Operations, Retry
from ._errors import WaitTimeoutError
from .render_links import Options, sign_render_link
from .webhooks import DEFAULT_TOLERANCE_SECONDS, Payload, verify_webhook

__all__ = ["Viewfinder", "AsyncViewfinder"]

T = TypeVar("T")
CaptureRef = Union[str, t.AcceptedCapture, t.Capture]


def _capture_id(capture: CaptureRef) -> str:
    return capture if isinstance(capture, str) else capture.id


class _Resource:
    def __init__(self, client: BaseClient) -> None:
        self._ops: Operations = client._ops


class _SyncResource(_Resource):
    def __init__(self, client: "Viewfinder") -> None:
        super().__init__(client)
        self._client = client


class _AsyncResource(_Resource):
    def __init__(self, client: "AsyncViewfinder") -> None:
        super().__init__(client)
        self._client = client


class RenderLinks(_Resource):
    def __init__(self, client: BaseClient) -> None:
        super().__init__(client)
        self._base_url = client.base_url

    def sign(
        self,
        options: Options,
        *,
        key_id: str,
        signing_secret: str,
        expires: Optional[int] = None,
        expires_in: Optional[int] = None,
    ) -> str:
        """A signed render link on this client's base URL (no request is made). See
        :func:`viewfinder.sign_render_link`."""
        return sign_render_link(self._base_url, options, key_id=key_id, signing_secret=signing_secret, expires=expires, expires_in=expires_in)


class Webhooks(_Resource):
    def verify(self, payload: Payload, header: Optional[str], secret: str, *, tolerance: float = DEFAULT_TOLERANCE_SECONDS) -> t.WebhookEvent:
        """The verified event of a delivery (raw body and ``Viewfinder-Signature``); see
        :func:`viewfinder.verify_webhook`."""
        return verify_webhook(payload, header, secret, tolerance=tolerance)


# ---------------------------------------------------------------------------------------------
# Blocking


class Screenshots(_SyncResource):
    def create(self, options: t.CaptureOptions) -> t.Screenshot:
        """A synchronous capture, answered as JSON (the image as a data URL: ``.image_bytes``)."""
        return self._client._send(self._ops.screenshot(options))

    def create_image(self, options: t.CaptureOptions) -> t.Image:
        """A synchronous capture, answered with the image's bytes (``Accept: image/...``)."""
        return self._client._send(self._ops.screenshot_image(options))


class Captures(_SyncResource):
    def submit(self, options: t.AsyncCaptureOptions, *, idempotency_key: Optional[str] = None) -> t.AcceptedCapture:
        """Queues an asynchronous capture; the answer comes once it is stored durably."""
        return self._client._send(self._ops.submit(options, idempotency_key))

    def submit_batch(self, captures: Sequence[t.AsyncCaptureOptions], *, idempotency_key: Optional[str] = None) -> List[t.AcceptedCapture]:
        """Queues 1 to 100 captures at once, all or none; the answers are in order."""
        return self._client._send(self._ops.submit_batch(captures, idempotency_key))

    def retrieve(self, capture: CaptureRef) -> t.Capture:
        return self._client._send(self._ops.capture(_capture_id(capture)))

    def image(self, capture: CaptureRef, *, accept: str = "image/*") -> t.Image:
        """The image of a capture that has succeeded (409 before)."""
        return self._client._send(self._ops.capture_image(_capture_id(capture), accept))

    def wait(self, capture: CaptureRef, *, timeout: float = 120.0, poll_interval: float = 1.0) -> t.Capture:
        """Polls until the capture has succeeded or failed, for at most ``timeout`` seconds
        (then :class:`WaitTimeoutError`). Returns the finished capture, whichever way it ended."""
        deadline = time.monotonic() + timeout
        while True:
            current = self.retrieve(capture)
            left = deadline - time.monotonic()
            if current.done:
                return current
            if left <= 0:
                raise WaitTimeoutError(f"Capture {current.id} still {current.status} after {timeout} s", current)
            time.sleep(min(poll_interval, left))


class Sites(_SyncResource):
    def list(self) -> List[t.Site]:
        return self._client._send(self._ops.list_sites())

    def create(self, params: t.SiteCreateParams) -> t.Site:
        return self._client._send(self._ops.create_site(params))

    def retrieve(self, site_id: str) -> t.Site:
        return self._client._send(self._ops.get_site(site_id))

    def update(self, site_id: str, params: t.SiteUpdateParams) -> t.Site:
        return self._client._send(self._ops.update_site(site_id, params))

    def delete(self, site_id: str) -> t.Deleted:
        return self._client._send(self._ops.delete_site(site_id))


class Destinations(_SyncResource):
    """Storage destinations (docs/storage.md): buckets captures can be written to; credentials are write-only."""

    def list(self) -> List[t.Destination]:
        return self._client._send(self._ops.list_destinations())

    def create(self, params: t.DestinationCreateParams) -> t.Destination:
        return self._client._send(self._ops.create_destination(params))

    def retrieve(self, name: str) -> t.Destination:
        return self._client._send(self._ops.get_destination(name))

    def update(self, name: str, params: t.DestinationUpdateParams) -> t.Destination:
        return self._client._send(self._ops.update_destination(name, params))

    def delete(self, name: str) -> t.Deleted:
        return self._client._send(self._ops.delete_destination(name))


class Keys(_SyncResource):
    def list(self) -> List[t.ApiKey]:
        return self._client._send(self._ops.list_keys())

    def create(self, params: t.KeyCreateParams) -> t.CreatedApiKey:
        return self._client._send(self._ops.create_key(params))

    def regenerate(self, key_id: str) -> t.CreatedApiKey:
        return self._client._send(self._ops.regenerate_key(key_id))

    def delete(self, key_id: str) -> t.Deleted:
        return self._client._send(self._ops.delete_key(key_id))


class UsageResource(_SyncResource):
    def retrieve(self) -> t.Usage:
        return self._client._send(self._ops.usage())


class Monitors(_SyncResource):
    def list(self) -> List[t.Monitor]:
        return self._client._send(self._ops.list_monitors())

    def create(self, params: t.MonitorCreateParams) -> t.Monitor:
        return self._client._send(self._ops.create_monitor(params))

    def retrieve(self, monitor_id: str) -> t.Monitor:
        return self._client._send(self._ops.get_monitor(monitor_id))

    def update(self, monitor_id: str, params: t.MonitorUpdateParams) -> t.Monitor:
        return self._client._send(self._ops.update_monitor(monitor_id, params))

    def delete(self, monitor_id: str) -> t.Deleted:
        return self._client._send(self._ops.delete_monitor(monitor_id))

    def run(self, monitor_id: str) -> t.MonitorRunStarted:
        """Run now (at most one pending run-now per monitor)."""
        return self._client._send(self._ops.run_monitor(monitor_id))

    def list_runs(self, monitor_id: str) -> List[t.MonitorRun]:
        """The runs, newest first (the API keeps ``historyLimit`` of them and has no pagination)."""
        return self._client._send(self._ops.list_monitor_runs(monitor_id))

    def retrieve_run(self, monitor_id: str, run_id: str) -> t.MonitorRunWithReports:
        """One run, each page with the report of its visit and the verdict of its checks."""
        return self._client._send(self._ops.get_monitor_run(monitor_id, run_id))

    def accept_baseline(self, monitor_id: str, params: t.MonitorBaselineParams) -> t.Monitor:
        return self._client._send(self._ops.accept_baseline(monitor_id, params))

    def image(self, monitor_id: str, image_id: str) -> bytes:
        """A capture, diff picture or baseline of the monitor, as PNG bytes."""
        return self._client._send(self._ops.monitor_image(monitor_id, image_id))


class Viewfinder(BaseClient):
    """A blocking client.

    ``Viewfinder(api_key, base_url=..., mode="hosted" | "self-hosted", timeout=90, max_retries=2)``.
    ``api_key`` and ``base_url`` default to ``VIEWFINDER_API_KEY`` and ``VIEWFINDER_URL``. Use it as a
    context manager, or call :meth:`close`, to release its connections.
    """

    def _setup(self, http_client: Optional[httpx.Client]) -> None:
        self._http = http_client or httpx.Client()
        self.screenshots = Screenshots(self)
        self.captures = Captures(self)
        self.render_links = RenderLinks(self)
        self.webhooks = Webhooks(self)
        self.sites = Sites(self)
        self.destinations = Destinations(self)
        self.keys = Keys(self)
        self.usage = UsageResource(self)
        self.monitors = Monitors(self)

    def with_options(self, **overrides: Any) -> "Viewfinder":
        """A copy with other settings (``timeout``, ``max_retries``, ...), sharing the connections."""
        options = {**self._options(), **overrides}
        copy = Viewfinder(self._api_key, http_client=self._http, **options)
        return copy

    def _send(self, op: Operation[T]) -> T:
        request = self.build_request(self._http, op)
        for attempt in itertools.count():
            response, error = None, None
            try:
                response = self._http.send(request)
            except httpx.HTTPError as err:
                error = err
            outcome = self.settle(op, attempt, response, error)
            if not isinstance(outcome, Retry):
                return outcome
            if response is not None:
                response.close()
            time.sleep(outcome.delay)
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> "Viewfinder":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------
# asyncio


class AsyncScreenshots(_AsyncResource):
    async def create(self, options: t.CaptureOptions) -> t.Screenshot:
        return await self._client._send(self._ops.screenshot(options))

    async def create_image(self, options: t.CaptureOptions) -> t.Image:
        return await self._client._send(self._ops.screenshot_image(options))


class AsyncCaptures(_AsyncResource):
    async def submit(self, options: t.AsyncCaptureOptions, *, idempotency_key: Optional[str] = None) -> t.AcceptedCapture:
        return await self._client._send(self._ops.submit(options, idempotency_key))

    async def submit_batch(self, captures: Sequence[t.AsyncCaptureOptions], *, idempotency_key: Optional[str] = None) -> List[t.AcceptedCapture]:
        return await self._client._send(self._ops.submit_batch(captures, idempotency_key))

    async def retrieve(self, capture: CaptureRef) -> t.Capture:
        return await self._client._send(self._ops.capture(_capture_id(capture)))

    async def image(self, capture: CaptureRef, *, accept: str = "image/*") -> t.Image:
        return await self._client._send(self._ops.capture_image(_capture_id(capture), accept))

    async def wait(self, capture: CaptureRef, *, timeout: float = 120.0, poll_interval: float = 1.0) -> t.Capture:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            current = await self.retrieve(capture)
            left = deadline - loop.time()
            if current.done:
                return current
            if left <= 0:
                raise WaitTimeoutError(f"Capture {current.id} still {current.status} after {timeout} s", current)
            await asyncio.sleep(min(poll_interval, left))


class AsyncSites(_AsyncResource):
    async def list(self) -> List[t.Site]:
        return await self._client._send(self._ops.list_sites())

    async def create(self, params: t.SiteCreateParams) -> t.Site:
        return await self._client._send(self._ops.create_site(params))

    async def retrieve(self, site_id: str) -> t.Site:
        return await self._client._send(self._ops.get_site(site_id))

    async def update(self, site_id: str, params: t.SiteUpdateParams) -> t.Site:
        return await self._client._send(self._ops.update_site(site_id, params))

    async def delete(self, site_id: str) -> t.Deleted:
        return await self._client._send(self._ops.delete_site(site_id))


class AsyncDestinations(_AsyncResource):
    """Storage destinations (docs/storage.md): buckets captures can be written to; credentials are write-only."""

    async def list(self) -> List[t.Destination]:
        return await self._client._send(self._ops.list_destinations())

    async def create(self, params: t.DestinationCreateParams) -> t.Destination:
        return await self._client._send(self._ops.create_destination(params))

    async def retrieve(self, name: str) -> t.Destination:
        return await self._client._send(self._ops.get_destination(name))

    async def update(self, name: str, params: t.DestinationUpdateParams) -> t.Destination:
        return await self._client._send(self._ops.update_destination(name, params))

    async def delete(self, name: str) -> t.Deleted:
        return await self._client._send(self._ops.delete_destination(name))


class AsyncKeys(_AsyncResource):
    async def list(self) -> List[t.ApiKey]:
        return await self._client._send(self._ops.list_keys())

    async def create(self, params: t.KeyCreateParams) -> t.CreatedApiKey:
        return await self._client._send(self._ops.create_key(params))

    async def regenerate(self, key_id: str) -> t.CreatedApiKey:
        return await self._client._send(self._ops.regenerate_key(key_id))

    async def delete(self, key_id: str) -> t.Deleted:
        return await self._client._send(self._ops.delete_key(key_id))


class AsyncUsageResource(_AsyncResource):
    async def retrieve(self) -> t.Usage:
        return await self._client._send(self._ops.usage())


class AsyncMonitors(_AsyncResource):
    async def list(self) -> List[t.Monitor]:
        return await self._client._send(self._ops.list_monitors())

    async def create(self, params: t.MonitorCreateParams) -> t.Monitor:
        return await self._client._send(self._ops.create_monitor(params))

    async def retrieve(self, monitor_id: str) -> t.Monitor:
        return await self._client._send(self._ops.get_monitor(monitor_id))

    async def update(self, monitor_id: str, params: t.MonitorUpdateParams) -> t.Monitor:
        return await self._client._send(self._ops.update_monitor(monitor_id, params))

    async def delete(self, monitor_id: str) -> t.Deleted:
        return await self._client._send(self._ops.delete_monitor(monitor_id))

    async def run(self, monitor_id: str) -> t.MonitorRunStarted:
        return await self._client._send(self._ops.run_monitor(monitor_id))

    async def list_runs(self, monitor_id: str) -> List[t.MonitorRun]:
        return await self._client._send(self._ops.list_monitor_runs(monitor_id))

    async def retrieve_run(self, monitor_id: str, run_id: str) -> t.MonitorRunWithReports:
        return await self._client._send(self._ops.get_monitor_run(monitor_id, run_id))

    async def accept_baseline(self, monitor_id: str, params: t.MonitorBaselineParams) -> t.Monitor:
        return await self._client._send(self._ops.accept_baseline(monitor_id, params))

    async def image(self, monitor_id: str, image_id: str) -> bytes:
        return await self._client._send(self._ops.monitor_image(monitor_id, image_id))


class AsyncViewfinder(BaseClient):
    """The asyncio client: the same resources as :class:`Viewfinder`, each call a coroutine.

    A call is cancelled with its task (``task.cancel()``, ``asyncio.wait_for``, ``asyncio.timeout``),
    which closes the request's connection at once, and is bounded by ``timeout`` as well.
    """

    def _setup(self, http_client: Optional[httpx.AsyncClient]) -> None:
        self._http = http_client or httpx.AsyncClient()
        self.screenshots = AsyncScreenshots(self)
        self.captures = AsyncCaptures(self)
        self.render_links = RenderLinks(self)
        self.webhooks = Webhooks(self)
        self.sites = AsyncSites(self)
        self.destinations = AsyncDestinations(self)
        self.keys = AsyncKeys(self)
        self.usage = AsyncUsageResource(self)
        self.monitors = AsyncMonitors(self)

    def with_options(self, **overrides: Any) -> "AsyncViewfinder":
        options = {**self._options(), **overrides}
        return AsyncViewfinder(self._api_key, http_client=self._http, **options)

    async def _send(self, op: Operation[T]) -> T:
        request = self.build_request(self._http, op)
        for attempt in itertools.count():
            response, error = None, None
            try:
                response = await self._http.send(request)
            except httpx.HTTPError as err:
                error = err
            outcome = self.settle(op, attempt, response, error)
            if not isinstance(outcome, Retry):
                return outcome
            if response is not None:
                await response.aclose()
            await asyncio.sleep(outcome.delay)
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncViewfinder":
        return self

    async def __aexit__(self, *_: Any) -> None:
        await self.aclose()
