"""bench/overhead.py runs (a few rounds), so the figure it records stays reproducible."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import gate_binary

SDK_ROOT = Path(__file__).resolve().parent.parent


def test_overhead_benchmark_runs_and_reports_each_figure():
    env = dict(os.environ, AGENTGATE_BIN=str(gate_binary()))
    proc = subprocess.run(
        [sys.executable, str(SDK_ROOT / "bench" / "overhead.py"), "--rounds", "3", "--write-rounds", "3"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for call in ("GET /agents/{id}/budget", "POST /agents/{id}/tools/search_web"):
        assert re.search(
            re.escape(call) + r": rounds 3 .*overhead p50 \(difference of medians\) -?\d+\.\d+ ms", out
        ), out
    assert re.search(r"offline attestation verification \(pure Python ES256\): \d+\.\d+ ms per token", out), out
