"""A real gate for the tests: ``agentgate serve`` as a subprocess.

The binary is ``AGENTGATE_BIN``, else ``<repo>/bin/agentgate`` (``make
build``). The gate listens on a free loopback port with a fixed admin key and
a fresh data folder, and is stopped when the session ends.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

SDK_ROOT = Path(__file__).resolve().parent.parent
REPO_ROOT = SDK_ROOT.parent.parent
ADMIN_KEY = "qwed_admin_sdk_tests"

sys.path.insert(0, str(SDK_ROOT))


def gate_binary() -> Path:
    path = Path(os.environ.get("AGENTGATE_BIN") or REPO_ROOT / "bin" / "agentgate")
    if not path.is_file():
        pytest.fail(f"no gate binary at {path}: run `make build` or set AGENTGATE_BIN")
    return path


class Gate:
    """A running gate: its URL, admin key, and a raw JSON request helper."""

    def __init__(self, url: str, data: Path, binary: Path) -> None:
        self.url = url
        self.data = data
        self.binary = binary
        self.admin_key = ADMIN_KEY

    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"null")

    def principal_key(self, principal_id: str) -> str:
        status, body = self.request(
            "POST", f"/principals/{principal_id}/keys", headers={"X-API-Key": self.admin_key}
        )
        assert status in (200, 201), body
        return body["api_key"]

    def register(self, principal_id: str, **permissions: Any) -> tuple[str, str]:
        """Registers a supervised agent of principal_id with the given
        permissions; returns (agent_id, agent_token)."""
        key = self.principal_key(principal_id)
        status, body = self.request(
            "POST",
            "/agents/register",
            {
                "agent": {"name": "sdk-test", "type": "supervised", "principal_id": principal_id},
                "permissions": permissions,
                "budget": {"max_daily_cost_usd": 100},
            },
            {"X-API-Key": key},
        )
        assert status in (200, 201), body
        return body["agent_id"], body["agent_token"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(binary: Path, data: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(data.parent / f"gate-{port}.log", "wb")
    proc = subprocess.Popen(
        [str(binary), "serve", "--data", str(data), "--http", f"127.0.0.1:{port}",
         "--api-key", ADMIN_KEY],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as resp:
                if resp.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise RuntimeError(f"gate did not start on {url}; see {log.name}")


@pytest.fixture(scope="session")
def gate(tmp_path_factory: pytest.TempPathFactory):
    binary = gate_binary()
    root = tmp_path_factory.mktemp("gate")
    last: Exception | None = None
    for attempt in range(3):  # a free port can be taken before the gate binds it
        data = root / f"data{attempt}"
        try:
            proc, url = _start(binary, data)
        except RuntimeError as exc:
            last = exc
            continue
        try:
            yield Gate(url, data, binary)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return
    raise RuntimeError(f"starting the gate: {last}")
