"""Captures: synchronous (bytes and JSON), asynchronous (submit, batch, poll, wait with a bound),
self-hosted and hosted (a full-access key with site_id, and a site key made through the API)."""

from __future__ import annotations

import asyncio

import pytest

import viewfinder

PNG = b"\x89PNG\r\n\x1a\n"


def test_self_hosted_capture_json_and_bytes(self_hosted: viewfinder.Viewfinder, page: str) -> None:
    shot = self_hosted.screenshots.create({"url": page, "quality": "standard"})
    assert shot.success and shot.width == 1280 and shot.height == 720
    assert shot.content_type == "image/png" and shot.image_bytes.startswith(PNG)
    assert shot.file_size == len(shot.image_bytes)

    image = self_hosted.screenshots.create_image({"url": page, "format": "jpeg", "imageQuality": 70})
    assert image.content_type == "image/jpeg" and image.data[:2] == b"\xff\xd8"
    assert image.width == 1280 and image.file_size == len(image.data)


def test_capture_with_a_page_report(self_hosted: viewfinder.Viewfinder, page: str) -> None:
    shot = self_hosted.screenshots.create({"url": page, "report": {"checks": {"status": [200], "maxConsoleErrors": 0}}})
    assert shot.image_bytes.startswith(PNG) and shot.report is not None
    assert shot.report["checks"]["failing"] is False and shot.report["checks"]["failures"] == [], shot.report["checks"]


def test_hosted_capture_with_full_access_key_and_site_id(hosted: viewfinder.Viewfinder, site, page: str) -> None:
    shot = hosted.screenshots.create({"url": page, "site_id": site.id, "fullPage": True})
    assert shot.site_id == site.id and shot.image_bytes.startswith(PNG)
    image = hosted.screenshots.create_image({"url": page, "site_id": site.id})
    assert image.data.startswith(PNG) and image.site_id == site.id and image.content_type == "image/png"


def test_hosted_capture_with_a_site_key(service, site, site_key, page: str) -> None:
    with viewfinder.Viewfinder(site_key.key, base_url=service["hosted"]["base"]) as client:
        image = client.screenshots.create_image({"url": page})
    assert image.data.startswith(PNG) and image.site_id == site.id


def test_async_submit_poll_and_wait(service, site_key, page: str) -> None:
    with viewfinder.Viewfinder(site_key.key, base_url=service["hosted"]["base"]) as client:
        accepted = client.captures.submit({"url": page}, idempotency_key="python-submit-1")
        assert accepted.id.startswith("job_") and accepted.status in ("queued", "running", "succeeded")
        assert accepted.status_url.endswith(accepted.id)
        # The same Idempotency-Key names the same capture.
        assert client.captures.submit({"url": page}, idempotency_key="python-submit-1").id == accepted.id
        polled = client.captures.retrieve(accepted.id)
        assert polled.id == accepted.id and polled.status in ("queued", "running", "succeeded")
        done = client.captures.wait(accepted, timeout=120, poll_interval=0.25)
        assert done.status == "succeeded" and done.result is not None and done.result.width == 1280
        assert done.result.image_bytes.startswith(PNG)
        assert client.captures.image(done).data.startswith(PNG)


def test_async_batch(service, site_key, page: str) -> None:
    with viewfinder.Viewfinder(site_key.key, base_url=service["hosted"]["base"]) as client:
        accepted = client.captures.submit_batch([{"url": page}, {"url": page, "quality": "mobile"}], idempotency_key="python-batch-1")
        assert len(accepted) == 2 and accepted[0].id != accepted[1].id
        finished = [client.captures.wait(a, timeout=120, poll_interval=0.25) for a in accepted]
        assert [c.status for c in finished] == ["succeeded", "succeeded"]
        assert finished[1].result is not None and finished[1].result.quality == "mobile"


def test_wait_is_bounded(service, site_key) -> None:
    with viewfinder.Viewfinder(site_key.key, base_url=service["hosted"]["base"]) as client:
        accepted = client.captures.submit({"url": service["pages"]["slow"] + "?ms=4000"})
        with pytest.raises(viewfinder.WaitTimeoutError) as raised:
            client.captures.wait(accepted, timeout=0.2, poll_interval=0.1)
        assert raised.value.capture.id == accepted.id and not raised.value.capture.done


def test_self_hosted_async_capture(self_hosted: viewfinder.Viewfinder, page: str) -> None:
    accepted = self_hosted.captures.submit({"url": page})
    assert "/captures/" in accepted.status_url and "/api/" not in accepted.status_url
    done = self_hosted.captures.wait(accepted.id, timeout=120, poll_interval=0.25)
    assert done.status == "succeeded"
    assert self_hosted.captures.image(accepted.id).data.startswith(PNG)


def test_asyncio_client_captures(service, site, page: str) -> None:
    async def main() -> None:
        async with viewfinder.AsyncViewfinder(service["hosted"]["key"], base_url=service["hosted"]["base"]) as client:
            shot, image = await asyncio.gather(
                client.screenshots.create({"url": page, "site_id": site.id}),
                client.screenshots.create_image({"url": page, "site_id": site.id}),
            )
            assert shot.image_bytes.startswith(PNG) and image.data.startswith(PNG)
            accepted = await client.captures.submit({"url": page, "site_id": site.id})
            done = await client.captures.wait(accepted, timeout=120, poll_interval=0.25)
            assert done.status == "succeeded"

    asyncio.run(main())
