"""Packaging: `pip install ./sdk/python` works offline, and the wheel is valid.

Each interpreter found (the one running the tests, Debian's /usr/bin/python3,
the python3 on PATH) gets a fresh venv; pip installs into it with --no-index,
so nothing may be downloaded: the in-tree backend (_build/backend.py) builds
the wheel with the standard library only.
"""

from __future__ import annotations

import base64
import csv
import email.parser
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

SDK_ROOT = Path(__file__).resolve().parent.parent


def _load_backend():
    path = SDK_ROOT / "_build" / "backend.py"
    spec = importlib.util.spec_from_file_location("qwed_build_backend", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


backend = _load_backend()


def _package_version() -> str:
    init = (SDK_ROOT / "qwed_sdk" / "__init__.py").read_text()
    for line in init.splitlines():
        if line.startswith("__version__ = "):
            return line.split('"')[1]
    raise AssertionError("qwed_sdk/__init__.py has no __version__ line")


def _interpreters() -> list[str]:
    """Distinct Python ≥ 3.10 interpreters that can make a venv: the one
    running the tests, Debian's, the python3 on PATH, and those listed in
    SDK_TEST_PYTHONS (paths separated by ':', e.g. other pyenv versions)."""
    found: dict[str, str] = {}
    extra = [p for p in os.environ.get("SDK_TEST_PYTHONS", "").split(":") if p]
    for cand in (sys.executable, "/usr/bin/python3", shutil.which("python3"), *extra):
        if not cand or not os.path.exists(cand):
            continue
        probe = subprocess.run(
            [cand, "-c", "import sys, venv; print(sys.executable, sys.version_info >= (3, 10))"],
            capture_output=True, text=True,
        )  # fmt: skip
        if probe.returncode != 0:
            continue
        exe, ok = probe.stdout.split()
        if ok == "True":
            found.setdefault(os.path.realpath(exe), exe)
    return sorted(found.values())


INTERPRETERS = _interpreters()


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
    env.update(PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return env


class Venv:
    def __init__(self, interpreter: str, path: Path) -> None:
        subprocess.run([interpreter, "-m", "venv", str(path)], check=True, env=_clean_env())
        self.path = path
        self.python = str(path / "bin" / "python")
        self.installed = False

    def pip(self, *args: str) -> None:
        proc = subprocess.run(
            [self.python, "-m", "pip", "install", "--no-index", "--force-reinstall", *args],
            capture_output=True, text=True, env=_clean_env(), cwd=self.path, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        self.installed = True

    def probe(self) -> dict[str, object]:
        """Imports qwed_sdk in the venv, from a folder that is not the source."""
        code = (
            "import json, importlib.metadata as md, pathlib, qwed_sdk, qwed_sdk.attestation\n"
            "d = pathlib.Path(qwed_sdk.__file__).parent\n"
            "print(json.dumps({'file': qwed_sdk.__file__, 'version': qwed_sdk.__version__,\n"
            "  'dist_version': md.version('qwed-sdk'),\n"
            "  'requires_python': md.metadata('qwed-sdk')['Requires-Python'],\n"
            "  'typed': (d / 'py.typed').is_file()}))\n"
        )
        proc = subprocess.run(
            [self.python, "-I", "-c", code], capture_output=True, text=True, cwd=self.path,
            env=_clean_env(),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)


_VENVS: dict[str, Venv] = {}


def _venv(interpreter: str, tmp_path_factory) -> Venv:
    if interpreter not in _VENVS:
        _VENVS[interpreter] = Venv(interpreter, tmp_path_factory.mktemp("venv") / "env")
    return _VENVS[interpreter]


@pytest.fixture(params=INTERPRETERS)
def venv(request, tmp_path_factory) -> Venv:
    """A venv of each interpreter (made once per session)."""
    return _venv(request.param, tmp_path_factory)


@pytest.fixture
def one_venv(tmp_path_factory) -> Venv:
    """The venv of the interpreter running the tests, for the checks that
    do not depend on the interpreter."""
    mine = sys.executable if sys.executable in INTERPRETERS else INTERPRETERS[0]
    return _venv(mine, tmp_path_factory)


def test_two_interpreters_are_covered_when_present():
    # The brief's two: pyenv's python3 and Debian's; on a machine with one,
    # the one.
    assert INTERPRETERS, "no Python >= 3.10 with venv found"


def _source_files() -> set[str]:
    return {str(p.relative_to(SDK_ROOT)) for p in SDK_ROOT.rglob("*") if "__pycache__" not in p.parts}


def test_pip_install_of_the_folder_works_offline(venv):
    before = _source_files()
    venv.pip(str(SDK_ROOT))
    assert _source_files() == before  # the build writes nothing into the sources (no build/, no egg-info)
    got = venv.probe()
    site = str(venv.path)
    assert got["file"].startswith(site), got  # the installed copy, not the sources
    assert got["version"] == got["dist_version"] == _package_version()
    assert got["requires_python"] == ">=3.10"
    assert got["typed"] is True


def test_editable_install_points_at_the_sources(one_venv):
    one_venv.pip("--editable", str(SDK_ROOT))
    got = one_venv.probe()
    assert Path(got["file"]).resolve() == (SDK_ROOT / "qwed_sdk" / "__init__.py").resolve()
    assert got["dist_version"] == _package_version()


def test_sdist_installs_offline(one_venv, tmp_path):
    name = backend.build_sdist(str(tmp_path))
    one_venv.pip(str(tmp_path / name))
    got = one_venv.probe()
    assert got["file"].startswith(str(one_venv.path))
    assert got["version"] == _package_version()


def _build_wheel(out: Path) -> Path:
    return out / backend.build_wheel(str(out))


def test_wheel_record_hashes_and_sizes_are_right(tmp_path):
    wheel = _build_wheel(tmp_path)
    version = _package_version()
    assert wheel.name == f"qwed_sdk-{version}-py3-none-any.whl"
    dist_info = f"qwed_sdk-{version}.dist-info"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert len(names) == len(set(names))
        rows = list(csv.reader(io.StringIO(zf.read(f"{dist_info}/RECORD").decode())))
        recorded = {row[0]: row for row in rows}
        assert set(recorded) == set(names)
        assert recorded[f"{dist_info}/RECORD"] == [f"{dist_info}/RECORD", "", ""]
        for name in names:
            if name.endswith("/RECORD"):
                continue
            data = zf.read(name)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")
            assert recorded[name] == [name, f"sha256={digest}", str(len(data))], name
        wheel_meta = email.parser.Parser().parsestr(zf.read(f"{dist_info}/WHEEL").decode())
        meta = email.parser.Parser().parsestr(zf.read(f"{dist_info}/METADATA").decode())
    assert wheel_meta["Wheel-Version"] == "1.0"
    assert wheel_meta["Root-Is-Purelib"] == "true"
    assert wheel_meta["Tag"] == "py3-none-any"
    assert meta["Metadata-Version"] == "2.1"
    assert meta["Name"] == "qwed-sdk"
    assert meta["Version"] == version
    assert meta["Requires-Python"] == ">=3.10"
    assert meta.get_all("Requires-Dist") == [
        'langchain-core>=0.1; extra == "langchain"',
        'crewai>=0.28; extra == "crewai"',
    ]
    assert meta.get_payload().startswith("# ")  # the README is the long description
    for wanted in ("py.typed", "__init__.py", "attestation.py", "langchain.py", "crewai.py"):
        assert f"qwed_sdk/{wanted}" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_a_tampered_record_is_detected(tmp_path):
    # The check above is not vacuous: a wheel whose file changed after
    # RECORD was written fails it.
    wheel = _build_wheel(tmp_path)
    forged = tmp_path / "forged.whl"
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(forged, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "qwed_sdk/attestation.py":
                data += b"\n# changed\n"
            dst.writestr(info, data)
    with zipfile.ZipFile(forged) as zf:
        rows = {r[0]: r for r in csv.reader(io.StringIO(zf.read(
            f"qwed_sdk-{_package_version()}.dist-info/RECORD").decode()))}  # fmt: skip
        data = zf.read("qwed_sdk/attestation.py")
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")
    assert rows["qwed_sdk/attestation.py"][1] != f"sha256={digest}"


def test_builds_are_reproducible(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert _build_wheel(a).read_bytes() == _build_wheel(b).read_bytes()
    sa, sb = backend.build_sdist(str(a)), backend.build_sdist(str(b))
    assert (a / sa).read_bytes() == (b / sb).read_bytes()


def test_sdist_holds_what_a_rebuild_needs(tmp_path):
    name = backend.build_sdist(str(tmp_path))
    top = name[: -len(".tar.gz")]
    with tarfile.open(tmp_path / name) as tar:
        members = set(tar.getnames())
        pkg_info = tar.extractfile(f"{top}/PKG-INFO").read().decode()
    for rel in ("PKG-INFO", "pyproject.toml", "README.md", "_build/backend.py",
                "qwed_sdk/__init__.py", "qwed_sdk/py.typed"):  # fmt: skip
        assert f"{top}/{rel}" in members
    assert "Metadata-Version: 2.1" in pkg_info


def test_metadata_hooks_match_the_wheel(tmp_path):
    assert backend.get_requires_for_build_wheel() == []
    assert backend.get_requires_for_build_sdist() == []
    assert backend.get_requires_for_build_editable() == []
    dist_info = backend.prepare_metadata_for_build_wheel(str(tmp_path))
    with zipfile.ZipFile(_build_wheel(tmp_path)) as zf:
        assert zf.read(f"{dist_info}/METADATA") == (tmp_path / dist_info / "METADATA").read_bytes()


def test_the_fallback_toml_reader_agrees_with_tomllib():
    # Python 3.10 has no tomllib; the backend's own reader must read our
    # pyproject.toml exactly as tomllib does.
    tomllib = pytest.importorskip("tomllib")
    text = (SDK_ROOT / "pyproject.toml").read_text()
    assert backend._MiniToml(text).parse() == tomllib.loads(text)
    sample = (
        '[a.b]\nk = "x\\u00e9\\"y" # c\nl = \'lit\\n\'\nn = -3\nt = true\n'
        'arr = [\n  "a", # one\n  { name = "n", v = 1 },\n]\n[c]\ne = {}\n'
    )
    assert backend._MiniToml(sample).parse() == tomllib.loads(sample)


@pytest.mark.parametrize("bad", ['k = "unterminated\n', "k = 1.5\n", "k = 1\nk = 2\n", 'k = """multi"""\n', "[t\n"])
def test_the_fallback_toml_reader_refuses_what_it_does_not_read(bad):
    with pytest.raises(ValueError):
        backend._MiniToml(bad).parse()


def _readme_quick_start() -> str:
    text = (SDK_ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_readme_quick_start_runs_as_written(gate, venv, tmp_path):
    # As the README says: the package installed, the address and a key in
    # the environment, nothing else; the block runs unchanged, on each
    # interpreter, from a folder that is not the sources.
    if not venv.installed:
        venv.pip(str(SDK_ROOT))
    env = _clean_env()
    env.update(AGENTGATE_URL=gate.url, AGENTGATE_API_KEY=gate.admin_key)
    proc = subprocess.run(
        [venv.python, "-I", "-c", _readme_quick_start()], capture_output=True, text=True, env=env,
        cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["APPROVED", "APPROVED True"]
