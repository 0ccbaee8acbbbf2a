"""A render link signed by the library and fetched from the hosted service; a webhook delivered by
the service and verified by the library (and a tampered one refused)."""

from __future__ import annotations

import json
import time

import httpx
import pytest

import viewfinder


def test_render_link_signed_here_is_served(service, hosted, site_key, page: str) -> None:
    link = hosted.render_links.sign({"url": page, "cacheTtl": 60}, key_id=site_key.id, signing_secret=site_key.signing_secret, expires_in=600)
    assert site_key.key not in link and site_key.signing_secret not in link
    answer = httpx.get(link, timeout=90)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "image/png" and answer.content.startswith(b"\x89PNG")

    # A full-access key signs too, with site_id among the options.
    full = service["hosted"]
    link = viewfinder.sign_render_link(full["base"], [("url", page), ("site_id", site_key.site_id)], key_id=full["keyId"], signing_secret=full["signingSecret"])
    assert httpx.get(link, timeout=90).status_code == 200

    # The server refuses a link whose options changed after signing, and an expired one.
    tampered = link.replace("url=", "url=x", 1)
    assert httpx.get(tampered, timeout=30).status_code == 401
    expired = hosted.render_links.sign({"url": page}, key_id=site_key.id, signing_secret=site_key.signing_secret, expires=int(time.time()) - 10)
    assert httpx.get(expired, timeout=30).status_code == 403


def _deliveries(service) -> list:
    return httpx.get(service["pages"]["hooks"], timeout=10).json()["deliveries"]


def test_webhook_delivered_by_the_service_verifies(service, site_key, page: str) -> None:
    with viewfinder.Viewfinder(site_key.key, base_url=service["hosted"]["base"]) as client:
        accepted = client.captures.submit({"url": page, "webhookUrl": service["pages"]["hook"] + "?python=1"})
        client.captures.wait(accepted, timeout=120, poll_interval=0.25)
        deadline = time.monotonic() + 60
        delivery = None
        while delivery is None:
            mine = [d for d in _deliveries(service) if json.loads(d["body"]).get("id") == accepted.id]
            delivery = mine[0] if mine else None
            if delivery is None:
                assert time.monotonic() < deadline, "the webhook was not delivered within 60 s"
                time.sleep(0.25)
        body = delivery["body"].encode("utf-8")
        header = delivery["headers"]["viewfinder-signature"]

        event = client.webhooks.verify(body, header, site_key.signing_secret)
        assert event.id == accepted.id and event.event == "capture.succeeded" and event.status == "succeeded"
        assert event.image_url and event.metadata and event.metadata["width"] == 1280
        assert delivery["headers"]["viewfinder-event"] == "capture.succeeded"
        # The event's image, fetched with the key, as a receiver would.
        assert client.captures.image(event.id).data.startswith(b"\x89PNG")

        tampered = body.replace(b'"succeeded"', b'"failed"', 1)
        with pytest.raises(viewfinder.SignatureVerificationError):
            viewfinder.verify_webhook(tampered, header, site_key.signing_secret)
        with pytest.raises(viewfinder.SignatureVerificationError):
            viewfinder.verify_webhook(body, header, "vfs_another_secret")
        with pytest.raises(viewfinder.SignatureVerificationError):
            viewfinder.verify_webhook(body, header, site_key.signing_secret, now=time.time() + 3600)
        with pytest.raises(viewfinder.SignatureVerificationError):
            viewfinder.verify_webhook(body, None, site_key.signing_secret)
