"""A capture with ``storage`` answers where the image went instead of the image (docs/storage.md):
``Screenshot.image`` is then None, never an empty string that would decode to nothing."""

import base64

import pytest

from viewfinder import types as t

STORED = {
    "success": True, "url": "https://example.com", "quality": "standard", "width": 1280, "height": 720,
    "fileSize": 20481, "processingTimeMs": 912, "waitMs": 500,
    "storage": {"destination": "archive", "bucket": "acme-shots", "key": "shots/2026-11-28/cap_5e0c.png",
                "url": "http://127.0.0.1:9000/acme-shots/shots/2026-11-28/cap_5e0c.png", "etag": "\"8f14\""},
}


def test_a_stored_answer_has_no_image_and_says_where_it_went() -> None:
    shot = t.from_json(t.Screenshot, STORED)
    assert shot.image is None
    assert shot.content_type == ""
    assert shot.storage is not None and (shot.storage.bucket, shot.storage.key) == ("acme-shots", "shots/2026-11-28/cap_5e0c.png")
    with pytest.raises(ValueError, match=r"no image: the capture was written to its storage destination \(acme-shots/shots/2026-11-28/cap_5e0c.png\)"):
        shot.image_bytes


def test_an_image_answer_has_its_image_and_no_storage() -> None:
    png = b"\x89PNG\r\n\x1a\n"
    fields = {key: value for key, value in STORED.items() if key != "storage"}
    shot = t.from_json(t.Screenshot, {**fields, "image": "data:image/png;base64," + base64.b64encode(png).decode()})
    assert shot.storage is None
    assert shot.content_type == "image/png"
    assert shot.image_bytes == png


def test_a_destination_names_the_site_that_owns_it() -> None:
    owner = {"kind": "Site", "namespace": "shop", "name": "storefront", "uid": "u1"}
    common = {"name": "archive", "endpoint": "https://s3.example", "bucket": "b", "region": "us-east-1", "pathStyle": False,
              "keyTemplate": "{id}.{format}", "hasCredentials": True, "createdAt": "", "updatedAt": ""}
    assert t.from_json(t.Destination, {**common, "managedBy": owner}).managed_by == t.from_json(t.ManagedBy, owner)
    assert t.from_json(t.Destination, {**common, "managedBy": None}).managed_by is None
