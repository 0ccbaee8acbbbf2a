"""The hosted management API: sites, keys, monitors, usage."""

from __future__ import annotations

import time

import pytest

import viewfinder


def test_sites(hosted: viewfinder.Viewfinder) -> None:
    created = hosted.sites.create({"allowedDomains": ["example.com", "*.example.org"], "name": "python-shop"})
    assert created.id.startswith("site_") and created.allowed_domains == ["example.com", "example.org"] and created.managed_by is None
    assert created.id in [s.id for s in hosted.sites.list()]
    assert hosted.sites.retrieve(created.id).name == "python-shop"
    updated = hosted.sites.update(created.id, {"allowedDomains": ["shop.example.net"]})
    assert updated.allowed_domains == ["shop.example.net"] and updated.name == "python-shop"
    assert hosted.sites.delete(created.id).deleted == created.id
    with pytest.raises(viewfinder.NotFoundError):
        hosted.sites.retrieve(created.id)


def test_keys(service, hosted: viewfinder.Viewfinder, site, page: str) -> None:
    created = hosted.keys.create({"name": "python-rotate", "siteId": site.id, "restrictDomains": False})
    assert created.kind == "site" and created.key.startswith("vf_") and created.signing_secret.startswith("vfs_")
    listed = {k.id: k for k in hosted.keys.list()}
    assert created.id in listed and listed[created.id].prefix == created.key[:11]
    assert "key" not in listed[created.id].raw and "signingSecret" not in listed[created.id].raw

    regenerated = hosted.keys.regenerate(created.id)
    assert regenerated.id == created.id and regenerated.key != created.key and regenerated.signing_secret != created.signing_secret
    with viewfinder.Viewfinder(created.key, base_url=service["hosted"]["base"]) as old:
        with pytest.raises(viewfinder.AuthenticationError):
            old.screenshots.create({"url": page})
    with viewfinder.Viewfinder(regenerated.key, base_url=service["hosted"]["base"]) as new:
        assert new.screenshots.create({"url": page}).site_id == site.id

    assert hosted.keys.delete(created.id).deleted == created.id
    assert created.id not in [k.id for k in hosted.keys.list()]


def test_site_key_may_not_manage(service, site_key) -> None:
    with viewfinder.Viewfinder(site_key.key, base_url=service["hosted"]["base"]) as client:
        with pytest.raises(viewfinder.PermissionDeniedError) as raised:
            client.sites.list()
    assert raised.value.status == 403


def test_monitors(hosted: viewfinder.Viewfinder, page: str) -> None:
    monitor = hosted.monitors.create(
        {
            "name": "python-monitor",
            "schedule": "@daily",
            "compare": {"threshold": 0.01},
            "pages": [{"name": "home", "url": page, "hideSelectors": [".clock"], "ignoreRegions": [{"left": 0, "top": 0, "width": 10, "height": 10}]}],
        }
    )
    assert monitor.id.startswith("mon_") and monitor.pages[0]["name"] == "home" and monitor.compare["threshold"] == 0.01
    assert monitor.id in [m.id for m in hosted.monitors.list()]
    assert hosted.monitors.retrieve(monitor.id).schedule == "@daily"

    started = hosted.monitors.run(monitor.id)
    assert started.job_id.startswith("job_")
    deadline = time.monotonic() + 150
    runs = hosted.monitors.list_runs(monitor.id)
    while not runs:
        assert time.monotonic() < deadline, "the monitor's run did not finish within 150 s"
        time.sleep(0.5)
        runs = hosted.monitors.list_runs(monitor.id)
    run = runs[0]
    assert run.trigger == "manual" and run.pages[0].page == "home"
    assert run.pages[0].outcome in ("baseline", "unchanged", "changed"), run.pages[0].error
    assert run.pages[0].capture_image_id
    assert run.pages[0].verdict is None  # no checks, no verdict
    assert hosted.monitors.retrieve_run(monitor.id, run.id).pages[0].report["document"]["status"] == 200
    assert hosted.monitors.image(monitor.id, run.pages[0].capture_image_id).startswith(b"\x89PNG")

    accepted = hosted.monitors.accept_baseline(monitor.id, {"runId": run.id, "page": "home"})
    assert accepted.baselines["home"] == run.pages[0].capture_image_id

    suspended = hosted.monitors.update(monitor.id, {"suspend": True})
    assert suspended.suspend is True and suspended.next_run_at is None
    assert hosted.monitors.delete(monitor.id).deleted == monitor.id
    with pytest.raises(viewfinder.NotFoundError):
        hosted.monitors.retrieve(monitor.id)


def test_usage(hosted: viewfinder.Viewfinder, site, page: str) -> None:
    hosted.screenshots.create({"url": page, "site_id": site.id})
    usage = hosted.usage.retrieve()
    counts = usage.sites[site.id]
    assert counts.captures >= 1 and counts.bytes > 0
    assert isinstance(usage.keys, dict) and isinstance(usage.monitors, dict)
