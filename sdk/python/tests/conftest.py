"""A real gate for the tests: ``agentgate serve`` as a subprocess.

The binary is ``AGENTGATE_BIN``, else ``<repo>/bin/agentgate`` (``make
build``). The gate listens on a free loopback port with a fixed admin key and
a fresh data folder, and is stopped when the session ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

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
        self.base_url = url
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
        status, body = self.request("POST", f"/principals/{principal_id}/keys", headers={"X-API-Key": self.admin_key})
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


_LISTENING = re.compile(rb"^agentgate listening on (https?://\S+)$", re.MULTILINE)


def _start(
    binary: Path, data: Path, extra: tuple[str, ...] = (), tls: ssl.SSLContext | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """Starts a gate on port 0: it binds a free port itself and prints the URL it
    listens on ("agentgate listening on URL"), read here from its log."""
    log_path = data.parent / f"gate-{data.name}.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [str(binary), "serve", "--data", str(data), "--http", "127.0.0.1:0",
         "--api-key", ADMIN_KEY, *extra],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if not url:
            m = _LISTENING.search(log_path.read_bytes())
            url = m.group(1).decode() if m else ""
        if url:
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2, context=tls) as resp:
                    if resp.status == 200:
                        return proc, url
            except OSError:
                pass
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise RuntimeError(f"gate did not start (url {url!r}); see {log_path}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stops a process started here: SIGTERM (the gate drains), SIGKILL after 15 s."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def running_gate(root: Path, *extra: str, tls: ssl.SSLContext | None = None) -> Iterator[Gate]:
    """Runs a gate (serve with extra flags) with its data under root until the block ends;
    with tls (a context trusting its certificate), extra holds --tls-cert and --tls-key."""
    binary, data = gate_binary(), root / "data"
    proc, url = _start(binary, data, extra, tls)
    try:
        yield Gate(url, data, binary)
    finally:
        _stop(proc)


@pytest.fixture(scope="session")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gate]:
    """The suite's gate: base_url/url, admin_key. Its refusal limit is off
    (--refusal-rate 0) so that the error tests of every file do not make
    the loopback address refused; tests of that limit start their own."""
    with running_gate(tmp_path_factory.mktemp("gate"), "--refusal-rate", "0") as g:
        yield g


@pytest.fixture(scope="session")
def business(gate: Gate, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local business (agentgate dev-business) for the execute calls: its orders URL."""
    log = tmp_path_factory.mktemp("business") / "business.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(gate.binary), "dev-business", "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=out
        )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        m = re.search(r"listening on (http://\S+)", line)
        if not m:
            raise RuntimeError(f"dev-business did not start: {line!r}; see {log}")
        yield m.group(1) + "/orders"
    finally:
        _stop(proc)
