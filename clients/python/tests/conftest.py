"""The real service the tests run against: test/clients/serve-for-clients.ts, started once per session.

It prints one JSON line (the hosted, self-hosted and busy services and the page server) and stops
everything it started when its stdin closes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

import viewfinder

ROOT = Path(os.environ.get("VIEWFINDER_REPO_ROOT") or Path(__file__).resolve().parents[3])
START_TIMEOUT = float(os.environ.get("VIEWFINDER_START_TIMEOUT", "240"))


def _node_major(node: str) -> int:
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        return 0
    return int(version[1:].split(".")[0]) if version.startswith("v") and version[1:].split(".")[0].isdigit() else 0


def _node() -> str:
    """VIEWFINDER_NODE, else node on PATH, else the checkout's own Node (make node): the first >= 22."""
    if os.environ.get("VIEWFINDER_NODE"):
        candidates = [os.environ["VIEWFINDER_NODE"]]
    else:
        candidates = [c for c in (shutil.which("node"), str(ROOT / "tools/node/node_modules/node/bin/node")) if c]
    for node in candidates:
        if _node_major(node) >= 22:
            return node
    pytest.exit(f"No Node.js >= 22 among {candidates}: serve-for-clients.ts needs one (set VIEWFINDER_NODE; make test puts Node 24 first on PATH)", returncode=2)


@pytest.fixture(scope="session")
def service() -> Iterator[Dict[str, Any]]:
    running = os.environ.get("VIEWFINDER_CLIENTS_SERVICE")
    if running:  # a serve-for-clients.ts already running: its JSON line, or a file holding it
        yield json.loads(Path(running).read_text("utf-8") if not running.lstrip().startswith("{") else running)
        return
    process = subprocess.Popen(
        [_node(), "test/clients/serve-for-clients.ts"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr: list = []
    threading.Thread(target=lambda: stderr.extend(process.stderr), daemon=True).start()  # type: ignore[arg-type]
    line: list = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(START_TIMEOUT)
    try:
        if not line or not line[0].strip():
            process.kill()
            pytest.exit(f"serve-for-clients.ts exited, or did not start within {START_TIMEOUT} s:\n{''.join(stderr)[-4000:]}", returncode=3)
        yield json.loads(line[0])
    finally:
        if process.stdin:
            process.stdin.close()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture(scope="session")
def hosted(service: Dict[str, Any]) -> Iterator[viewfinder.Viewfinder]:
    """A full-access key of the test account, on the hosted service."""
    with viewfinder.Viewfinder(service["hosted"]["key"], base_url=service["hosted"]["base"]) as client:
        yield client


@pytest.fixture(scope="session")
def self_hosted(service: Dict[str, Any]) -> Iterator[viewfinder.Viewfinder]:
    with viewfinder.Viewfinder(service["selfHosted"]["apiKey"], base_url=service["selfHosted"]["base"], mode="self-hosted") as client:
        yield client


@pytest.fixture(scope="session")
def site(hosted: viewfinder.Viewfinder) -> viewfinder.types.Site:
    """A site without domain restrictions, for the captures."""
    return hosted.sites.create({"allowedDomains": [], "name": "python-captures"})


@pytest.fixture(scope="session")
def site_key(hosted: viewfinder.Viewfinder, site: viewfinder.types.Site) -> viewfinder.types.CreatedApiKey:
    """A key scoped to that site, made through the management API (with its signing secret)."""
    return hosted.keys.create({"name": "python-site-key", "siteId": site.id})


@pytest.fixture()
def page(service: Dict[str, Any]) -> str:
    return service["pages"]["page"]


def pytest_report_header() -> str:
    return f"viewfinder-client {viewfinder.__version__} on Python {sys.version.split()[0]}; repository {ROOT}"
