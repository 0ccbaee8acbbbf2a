"""The Python examples of docs/clients.md (its "## Python" section) and of the README run as
written, against the real service: the environment variables they read point at it."""

from __future__ import annotations

import html
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List, Tuple

import httpx
import pytest

import viewfinder

from conftest import ROOT

README = Path(__file__).resolve().parents[1] / "README.md"
CLIENTS_MD = ROOT / "docs" / "clients.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_section(markdown: str) -> str:
    match = re.search(r"^## Python\n(.*?)(?=^## |\Z)", markdown, re.S | re.M)
    return match.group(1) if match else ""


def blocks() -> List[Tuple[str, str]]:
    found = [(f"README.md #{i + 1}", code) for i, code in enumerate(FENCE.findall(README.read_text("utf-8")))]
    section = python_section(CLIENTS_MD.read_text("utf-8"))
    found += [(f"docs/clients.md #{i + 1}", code) for i, code in enumerate(FENCE.findall(section))]
    return found


BLOCKS = blocks()


def test_the_docs_have_examples() -> None:
    names = [name for name, _ in BLOCKS]
    assert any(n.startswith("README") for n in names) and any(n.startswith("docs/clients.md") for n in names), names
    for where in (README.read_text("utf-8"), python_section(CLIENTS_MD.read_text("utf-8"))):
        examples = "".join(FENCE.findall(where))
        assert "create_image" in examples and "sign_render_link" in examples and "verify_webhook" in examples


@pytest.fixture(scope="module")
def env(service, hosted, site_key) -> Dict[str, str]:
    return {
        **os.environ,
        "VIEWFINDER_URL": service["hosted"]["base"],
        "VIEWFINDER_API_KEY": site_key.key,
        "VIEWFINDER_KEY_ID": site_key.id,
        "VIEWFINDER_SIGNING_SECRET": site_key.signing_secret,
        "VIEWFINDER_ADMIN_KEY": service["hosted"]["key"],
        "PAGE_URL": service["pages"]["page"],
    }


def run(code: str, env: Dict[str, str], cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def check_receiver(code: str, env: Dict[str, str], service) -> None:
    """The Flask receiver, served on loopback, gets a real delivery from the service and answers it
    2xx (it verified); a tampered delivery gets 400."""
    from werkzeug.serving import make_server

    saved = dict(os.environ)
    os.environ.update(env)
    try:
        namespace: Dict[str, object] = {"__name__": "docs_receiver"}
        exec(compile(code, "docs_receiver", "exec"), namespace)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    app = namespace["app"]
    port = free_port()
    server = make_server("127.0.0.1", port, app)  # type: ignore[arg-type]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with viewfinder.Viewfinder(env["VIEWFINDER_API_KEY"], base_url=env["VIEWFINDER_URL"]) as client:
            accepted = client.captures.submit({"url": env["PAGE_URL"], "webhookUrl": f"http://127.0.0.1:{port}/viewfinder"})
            client.captures.wait(accepted, timeout=120, poll_interval=0.25)
            deadline = time.monotonic() + 60
            while True:
                webhook = client.captures.retrieve(accepted).webhook
                if webhook and webhook.status == "delivered":
                    break
                assert time.monotonic() < deadline, f"the receiver did not accept the delivery: {webhook}"
                time.sleep(0.25)
        body = b'{"id":"job_x","event":"capture.succeeded"}'
        header = viewfinder.sign_webhook(body, env["VIEWFINDER_SIGNING_SECRET"])
        test_client = app.test_client()  # type: ignore[attr-defined]
        assert test_client.post("/viewfinder", data=body, headers={"Viewfinder-Signature": header}).status_code < 300
        assert test_client.post("/viewfinder", data=body + b" ", headers={"Viewfinder-Signature": header}).status_code == 400
    finally:
        server.shutdown()


@pytest.mark.parametrize("name,code", BLOCKS, ids=[name for name, _ in BLOCKS])
def test_example_runs(name: str, code: str, env: Dict[str, str], service, tmp_path: Path) -> None:
    if "Flask(__name__)" in code:
        check_receiver(code, env, service)
        return
    if 'mode="self-hosted"' in code:
        env = {**env, "VIEWFINDER_URL": service["selfHosted"]["base"], "VIEWFINDER_API_KEY": service["selfHosted"]["apiKey"]}
    out = run(code, env, tmp_path)
    for png in tmp_path.glob("*.png"):
        assert png.read_bytes().startswith(b"\x89PNG"), png
    for src in re.findall(r'<img src="([^"]+)"', out):
        answer = httpx.get(html.unescape(src), timeout=90)
        assert answer.status_code == 200 and answer.headers["content-type"] == "image/png", answer.text
    if "screenshot.png" in code:
        assert (tmp_path / "screenshot.png").exists()
