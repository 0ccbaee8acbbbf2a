"""The shared vectors of clients/vectors/: every case, byte for byte, as the server and the other
two libraries read them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import viewfinder
from viewfinder.render_links import form_encode, render_link_signature
from viewfinder.webhooks import verify_signature

from conftest import ROOT

VECTORS = ROOT / "clients" / "vectors"
LINKS = json.loads((VECTORS / "render-links.json").read_text("utf-8"))["vectors"]
WEBHOOKS = json.loads((VECTORS / "webhooks.json").read_text("utf-8"))


@pytest.mark.parametrize("vector", LINKS, ids=[v["name"] for v in LINKS])
def test_render_link_vector(vector: dict) -> None:
    options = [tuple(pair) for pair in vector["options"]]
    link = viewfinder.sign_render_link(
        vector["origin"], options, key_id=vector["keyId"], signing_secret=vector["signingSecret"], expires=vector.get("expires")
    )
    assert link == vector["link"]
    pairs = options + [("key", vector["keyId"])] + ([("expires", str(vector["expires"]))] if "expires" in vector else [])
    assert form_encode(pairs) == vector["signedQuery"]
    assert render_link_signature(vector["signedQuery"], vector["signingSecret"]) == vector["signature"]


@pytest.mark.parametrize("vector", WEBHOOKS["sign"], ids=[v["name"] for v in WEBHOOKS["sign"]])
def test_webhook_sign_vector(vector: dict) -> None:
    assert viewfinder.sign_webhook(vector["body"], vector["secret"], timestamp=vector["timestamp"]) == vector["header"]
    # The raw body as bytes (what a server framework hands over) signs the same.
    assert viewfinder.sign_webhook(vector["body"].encode("utf-8"), vector["secret"], timestamp=vector["timestamp"]) == vector["header"]


@pytest.mark.parametrize("vector", WEBHOOKS["verify"], ids=[v["name"] for v in WEBHOOKS["verify"]])
def test_webhook_verify_vector(vector: dict) -> None:
    def verify() -> None:
        verify_signature(vector["body"].encode("utf-8"), vector["header"], vector["secret"], tolerance=vector["toleranceSeconds"], now=vector["now"])

    if vector["valid"]:
        verify()
        event = viewfinder.verify_webhook(vector["body"], vector["header"], vector["secret"], tolerance=vector["toleranceSeconds"], now=vector["now"])
        assert event.raw == json.loads(vector["body"])
    else:
        with pytest.raises(viewfinder.SignatureVerificationError):
            verify()


def test_link_options_flatten_as_documented() -> None:
    link = viewfinder.sign_render_link(
        "https://vf.example",
        {"url": "https://example.com/", "fullPage": True, "hideSelectors": [".a", ".b"], "format": "pdf", "pdf": {"paper": "Letter", "margin": {"top": "1cm"}}, "wait": None},
        key_id="key_1",
        signing_secret="s",
    )
    query = link.split("?", 1)[1]
    assert query.startswith(
        "url=https%3A%2F%2Fexample.com%2F&fullPage=true&hideSelectors=.a&hideSelectors=.b&format=pdf&pdf.paper=Letter&pdf.margin.top=1cm&key=key_1&signature="
    )
