#!/usr/bin/env python3
"""What AsyncQWEDClient adds to a call, against a raw asyncio call.

Starts a gate as sdk/python/bench/overhead.py does (AGENTGATE_BIN, else
<repo>/bin/agentgate), registers an agent and, in interleaved rounds whose
order alternates, times on one event loop:

- GET /agents/{id}/budget: AsyncQWEDClient.get_agent_budget against the
  same request written by hand on its own keep-alive asyncio connection
  (same headers), its Content-Length body read and JSON-decoded;
- POST /agents/{id}/tools/search_web: verify_tool_call against the same
  raw request (an Idempotency-Key each, as the SDK sends).

Prints the medians, the difference of the medians and the median of the
per-round differences (the async SDK's overhead, p50).

    python3 sdk/python/tools/bench_async.py [--rounds 3000] [--write-rounds 600]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

SDK = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SDK))
sys.path.insert(0, str(SDK / "bench"))

from overhead import ADMIN_KEY, start_gate  # noqa: E402

from qwed_sdk import AsyncQWEDClient, QWEDClient  # noqa: E402


class RawAsync:
    """One keep-alive asyncio connection sending the SDK's headers."""

    def __init__(self, url: str, token: str) -> None:
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 80
        self.netloc = u.netloc
        self.token = token

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def call(self, method: str, path: str, body: bytes | None = None) -> object:
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.netloc}\r\nAccept: application/json\r\n"
        head += f"Authorization: Bearer {self.token}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            head += f"Idempotency-Key: {secrets.token_hex(16)}\r\n"
        self.writer.write((head + "\r\n").encode() + (body or b""))
        await self.writer.drain()
        lines = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for line in lines[1:]:
            k, _, v = line.partition(":")
            if k.lower() == "content-length":
                length = int(v)
        data = await self.reader.readexactly(length)
        if status >= 300:
            raise SystemExit(f"raw {method} {path}: HTTP {status}: {data[:200]!r}")
        return json.loads(data)


async def compare(name: str, rounds: int, sdk_call, raw_call) -> None:
    for i in range(min(200, rounds)):  # warm both paths and the gate
        await sdk_call(-1 - i)
        await raw_call(-1 - i)
    sdk, raw, diff = [], [], []
    for i in range(rounds):
        first, second = (raw_call, sdk_call) if i % 2 else (sdk_call, raw_call)
        t0 = time.perf_counter_ns()
        await first(i)
        t1 = time.perf_counter_ns()
        await second(i)
        t2 = time.perf_counter_ns()
        s, r = (t2 - t1, t1 - t0) if i % 2 else (t1 - t0, t2 - t1)
        sdk.append(s)
        raw.append(r)
        diff.append(s - r)
    ms = 1e6
    print(
        f"{name}: rounds {rounds}  raw p50 {statistics.median(raw) / ms:.3f} ms  "
        f"async sdk p50 {statistics.median(sdk) / ms:.3f} ms  "
        f"overhead p50 (difference of medians) {(statistics.median(sdk) - statistics.median(raw)) / ms:.3f} ms  "
        f"(median of per-round differences) {statistics.median(diff) / ms:.3f} ms"
    )


async def run(url: str, rounds: int, write_rounds: int) -> None:
    with QWEDClient(ADMIN_KEY, base_url=url) as admin:
        reg = admin.register_agent(
            name="bench", principal_id="org_bench", permissions={"allowed_tools": ["search_web"]}
        )
    agent_id, token = reg["agent_id"], reg["agent_token"]
    raw = RawAsync(url, token)
    await raw.open()
    async with AsyncQWEDClient(base_url=url, agent_token=token, max_retries=0) as client:
        await compare(
            "GET /agents/{id}/budget",
            rounds,
            lambda i: client.get_agent_budget(agent_id),
            lambda i: raw.call("GET", f"/agents/{agent_id}/budget"),
        )
        tool = f"/agents/{agent_id}/tools/search_web"
        await compare(
            "POST /agents/{id}/tools/search_web",
            write_rounds,
            lambda i: client.verify_tool_call(agent_id, "search_web", {"q": f"s{i}"}),
            lambda i: raw.call(
                "POST",
                tool,
                json.dumps({"tool_call": {"tool_name": "search_web", "parameters": {"q": f"r{i}"}}}).encode(),
            ),
        )
    raw.writer.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3000, help="rounds of the GET comparison")
    ap.add_argument("--write-rounds", type=int, default=600, help="rounds of the POST comparison")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="sdk-bench-async-") as data:
        proc, url = start_gate(data)
        try:
            asyncio.run(run(url, args.rounds, args.write_rounds))
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    print(f"python {sys.version.split()[0]}, nproc {os.cpu_count()}")


if __name__ == "__main__":
    main()
