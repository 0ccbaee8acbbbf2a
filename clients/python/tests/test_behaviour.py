"""Errors, retries, timeouts, cancellation, the user agent, and no credential in any error."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import time
from typing import Any, Dict, Iterator, List

import httpx
import pytest

import viewfinder


def counting_client(**kwargs: Any) -> "tuple[viewfinder.Viewfinder, List[int]]":
    """A client whose every answer's status is recorded (one entry per request sent)."""
    statuses: List[int] = []
    http_client = httpx.Client(event_hooks={"response": [lambda r: statuses.append(r.status_code)]})
    return viewfinder.Viewfinder(http_client=http_client, **kwargs), statuses


def test_typed_errors(service, hosted: viewfinder.Viewfinder, site) -> None:
    with viewfinder.Viewfinder("vf_not_a_key", base_url=service["hosted"]["base"]) as wrong:
        with pytest.raises(viewfinder.AuthenticationError) as unauthorized:
            wrong.sites.list()
    assert unauthorized.value.status == 401 and unauthorized.value.message == "Invalid API key"

    with pytest.raises(viewfinder.InvalidRequestError) as invalid:
        hosted.screenshots.create({"url": "https://example.com/"})  # a full-access key needs site_id
    assert invalid.value.status == 400 and invalid.value.message == "site_id is required with a full-access API key"

    with pytest.raises(viewfinder.NotFoundError) as missing:
        hosted.captures.retrieve("job_000000000000000000000000")
    assert missing.value.status == 404 and missing.value.message

    with pytest.raises(viewfinder.NotFoundError):
        hosted.screenshots.create({"url": "https://example.com/", "site_id": "site_000000000000000000000000"})


def test_no_retry_on_a_400(service, site) -> None:
    client, statuses = counting_client(api_key=service["hosted"]["key"], base_url=service["hosted"]["base"], max_retries=5)
    with client, pytest.raises(viewfinder.InvalidRequestError) as raised:
        client.screenshots.create({"url": "https://example.com/", "site_id": site.id, "wait": 5})  # type: ignore[typeddict-item]
    assert statuses == [400] and "wait" in raised.value.message


def test_429_is_retried_after_retry_after(service) -> None:
    base, slow, page = service["busy"]["base"], service["pages"]["slow"], service["pages"]["page"]
    busy_slow = viewfinder.Viewfinder(base_url=base, mode="self-hosted", max_retries=0)
    in_flight = threading.Thread(target=lambda: busy_slow.screenshots.create({"url": f"{slow}?ms=12000"}), daemon=True)
    in_flight.start()

    # With retries off, the render queue's 429 is raised with its Retry-After (the slow capture may
    # take a moment to take the only slot: until then a capture goes through).
    no_retry = viewfinder.Viewfinder(base_url=base, mode="self-hosted", max_retries=0)
    deadline = time.monotonic() + 60
    while True:
        try:
            no_retry.screenshots.create({"url": page})
        except viewfinder.RateLimitError as err:
            assert err.status == 429 and err.retry_after is not None and err.retry_after >= 0
            assert "Too many requests" in err.message
            break
        assert time.monotonic() < deadline, "the busy service never answered 429"
        time.sleep(0.1)

    client, statuses = counting_client(base_url=base, mode="self-hosted", max_retries=40)
    with client:
        shot = client.screenshots.create({"url": page})
    assert shot.success and statuses[-1] == 200 and statuses.count(429) >= 1, statuses
    in_flight.join(90)
    busy_slow.close()
    no_retry.close()


def test_timeout(service, self_hosted: viewfinder.Viewfinder) -> None:
    quick = self_hosted.with_options(timeout=1.0, max_retries=0)
    with pytest.raises(viewfinder.APITimeoutError):
        quick.screenshots.create({"url": service["pages"]["slow"] + "?ms=4000"})


def test_asyncio_timeout_and_cancellation(service) -> None:
    slow = service["pages"]["slow"] + "?ms=4000"

    async def main() -> None:
        async with viewfinder.AsyncViewfinder(service["selfHosted"]["apiKey"], base_url=service["selfHosted"]["base"], mode="self-hosted") as client:
            with pytest.raises(viewfinder.APITimeoutError):
                await client.with_options(timeout=1.0).screenshots.create({"url": slow})
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(client.screenshots.create({"url": slow}), 1.0)
            task = asyncio.ensure_future(client.screenshots.create({"url": slow}))
            await asyncio.sleep(0.5)
            assert not task.done()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert task.cancelled()
            # The client is still usable after a cancelled call.
            assert (await client.screenshots.create({"url": service["pages"]["page"]})).success

    asyncio.run(main())


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: List[Dict[str, str]] = []

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length") or 0))
        _Recorder.seen.append({k.lower(): v for k, v in self.headers.items()})
        body = json.dumps({"success": True, "image": "data:image/png;base64,", "url": "x", "quality": "standard", "width": 1, "height": 1, "fileSize": 0, "processingTimeMs": 0}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture()
def recorder() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_user_agent_and_key_header(recorder: str) -> None:
    _Recorder.seen.clear()
    with viewfinder.Viewfinder("vf_recorded", base_url=recorder, mode="self-hosted") as client:
        client.screenshots.create({"url": "https://example.com/"})

    async def from_asyncio() -> None:
        async with viewfinder.AsyncViewfinder(base_url=recorder, mode="self-hosted") as client:
            await client.screenshots.create({"url": "https://example.com/"})

    asyncio.run(from_asyncio())
    headers, async_headers = _Recorder.seen
    assert async_headers["user-agent"] == viewfinder.USER_AGENT and "x-api-key" not in async_headers
    assert headers["user-agent"] == viewfinder.USER_AGENT
    assert headers["user-agent"].startswith(f"viewfinder-python/{viewfinder.__version__} ")
    assert headers["x-api-key"] == "vf_recorded" and headers["content-type"] == "application/json"


def test_no_credential_in_errors(service, site_key) -> None:
    secret_key = "vf_ThisKeyMustNeverAppearInAnyErrorText0000000"
    texts: List[str] = []
    with viewfinder.Viewfinder(secret_key, base_url=service["hosted"]["base"]) as client:
        texts.append(repr(client))
        with pytest.raises(viewfinder.AuthenticationError) as unauthorized:
            client.sites.list()
        err = unauthorized.value
        texts += [str(err), repr(err), repr(err.args), json.dumps(err.body)]
    with viewfinder.Viewfinder(secret_key, base_url="http://user:pass-word@127.0.0.1:9", max_retries=0) as unreachable:
        with pytest.raises(viewfinder.APIConnectionError) as refused:
            unreachable.sites.list()
        texts += [str(refused.value), repr(refused.value), repr(unreachable)]
    texts.append(repr(site_key))
    for text in texts:
        assert secret_key not in text and "pass-word" not in text
        assert site_key.key not in text and site_key.signing_secret not in text
