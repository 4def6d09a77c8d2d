"""What the Python SDK adds to a call, against a raw HTTP call.

Starts a gate (``AGENTGATE_BIN``, else ``<repo>/bin/agentgate``) on a free
loopback port, registers an agent, and then, in interleaved rounds (the
order of the two calls alternates each round), times:

- ``GET /agents/{id}/budget``: ``QWEDClient.get_agent_budget`` against
  ``http.client`` on its own keep-alive connection with the same headers;
- ``POST /agents/{id}/tools/search_web``: ``QWEDClient.verify_tool_call``
  against the same raw request (an Idempotency-Key each, as the SDK sends);

and prints the median of each, the difference of the medians and the median
of the per-round differences (the SDK's overhead, p50), plus the cost of one
offline attestation verification (qwed_sdk.attestation).

    python3 sdk/python/bench/overhead.py [--rounds 3000] [--write-rounds 600]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

SDK_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SDK_ROOT))

from qwed_sdk import QWEDClient  # noqa: E402
from qwed_sdk.attestation import KeySet  # noqa: E402

ADMIN_KEY = "qwed_admin_bench"


def start_gate(data: str) -> tuple[subprocess.Popen[bytes], str]:
    binary = os.environ.get("AGENTGATE_BIN") or str(SDK_ROOT.parent.parent / "bin" / "agentgate")
    # Port 0: the gate binds a free port itself and prints the URL, its only
    # stdout line when --api-key is given.
    proc = subprocess.Popen(
        [binary, "serve", "--data", data, "--http", "127.0.0.1:0", "--api-key", ADMIN_KEY],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if not line.startswith("agentgate listening on "):
        proc.kill()
        raise SystemExit(f"the gate did not start: {line!r}")
    url = line.split()[-1]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the gate did not start on {url}")


class Raw:
    """One keep-alive http.client connection with the SDK's headers."""

    def __init__(self, url: str, token: str) -> None:
        u = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        self.headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}

    def call(self, method: str, path: str, body: bytes | None = None) -> bytes:
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = "application/json"
            headers["Idempotency-Key"] = secrets.token_hex(16)
        self.conn.request(method, path, body=body, headers=headers)
        resp = self.conn.getresponse()
        data = resp.read()
        if resp.status >= 300:
            raise SystemExit(f"raw {method} {path}: HTTP {resp.status}: {data[:200]!r}")
        return data


def timed(fn) -> int:
    start = time.perf_counter_ns()
    fn()
    return time.perf_counter_ns() - start


def compare(name: str, rounds: int, sdk_call, raw_call) -> None:
    for _ in range(min(200, rounds)):  # warm both paths and the gate
        sdk_call(-1)
        raw_call(-1)
    sdk, raw, diff = [], [], []
    for i in range(rounds):
        if i % 2:
            r = timed(lambda: raw_call(i))
            s = timed(lambda: sdk_call(i))
        else:
            s = timed(lambda: sdk_call(i))
            r = timed(lambda: raw_call(i))
        sdk.append(s)
        raw.append(r)
        diff.append(s - r)
    ms = 1e6
    print(
        f"{name}: rounds {rounds}  raw p50 {statistics.median(raw) / ms:.3f} ms  "
        f"sdk p50 {statistics.median(sdk) / ms:.3f} ms  "
        f"overhead p50 (difference of medians) {(statistics.median(sdk) - statistics.median(raw)) / ms:.3f} ms  "
        f"(median of per-round differences) {statistics.median(diff) / ms:.3f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3000, help="rounds of the GET comparison")
    ap.add_argument("--write-rounds", type=int, default=600, help="rounds of the POST comparison")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="sdk-bench-") as data:
        proc, url = start_gate(data)
        try:
            with QWEDClient(ADMIN_KEY, base_url=url) as admin:
                reg = admin.register_agent(
                    name="bench", type="supervised", principal_id="org_bench",
                    permissions={"allowed_tools": ["search_web"]},
                )  # fmt: skip
            agent_id, token = reg["agent_id"], reg["agent_token"]
            raw = Raw(url, token)
            with QWEDClient(base_url=url, agent_token=token, max_retries=0) as client:
                compare(
                    "GET /agents/{id}/budget", args.rounds,
                    lambda i: client.get_agent_budget(agent_id),
                    lambda i: raw.call("GET", f"/agents/{agent_id}/budget"),
                )  # fmt: skip

                def body(i: int, who: str) -> dict:
                    return {"tool_call": {"tool_name": "search_web", "parameters": {"q": f"{who}{i}"}}}

                compare(
                    "POST /agents/{id}/tools/search_web", args.write_rounds,
                    lambda i: client.verify_tool_call(agent_id, "search_web", {"q": f"s{i}"}),
                    lambda i: raw.call(
                        "POST", f"/agents/{agent_id}/tools/search_web", json.dumps(body(i, "r")).encode()
                    ),
                )  # fmt: skip
                reply = client.verify_tool_call(
                    agent_id, "search_web", {"q": "att"}, options={"require_attestation": True}
                )
                keys = KeySet(client.jwks())
                n = 200
                start = time.perf_counter_ns()
                for _ in range(n):
                    keys.verify(reply["attestation"])
                per = (time.perf_counter_ns() - start) / n / 1e6
                print(f"offline attestation verification (pure Python ES256): {per:.2f} ms per token")
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    print(f"python {sys.version.split()[0]}, nproc {os.cpu_count()}")


if __name__ == "__main__":
    main()
