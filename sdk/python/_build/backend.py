"""The in-tree PEP 517 / PEP 660 build backend of qwed_sdk.

``pip install ./sdk/python`` builds in an isolated environment that first
installs the project's build requirements; with setuptools there that means a
download, and PyPI is not always reachable. This backend needs nothing but the
standard library, so ``[build-system] requires = []`` and the install works
offline.

It reads the ``[project]`` table of pyproject.toml (PEP 621) and
``[tool.qwed-build]`` (``package``: the import package to ship;
``sdist-include``: the other files of a source distribution), takes the
version from the ``__version__ = "..."`` line of the package's ``__init__.py``
(its one home), and writes:

- a wheel (PEP 427): the package's files, ``<dist>.dist-info/METADATA``
  (core metadata 2.1), ``WHEEL`` and ``RECORD`` (sha256 and size of every
  other file);
- an editable wheel (PEP 660): the metadata and a ``.pth`` file that puts the
  source folder on ``sys.path``;
- a source distribution (PEP 517 §sdist, PEP 625 name): ``PKG-INFO`` and the
  sources under ``<dist>-<version>/``.

Archives are reproducible: members in sorted order, fixed timestamps
(``SOURCE_DATE_EPOCH`` when set) and fixed permissions.
"""

from __future__ import annotations

import base64
import csv
import gzip
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
_GENERATOR = "qwed-build 1"
_TAG = "py3-none-any"
# The earliest time a zip file can hold (1980-01-01).
_ZIP_EPOCH = 315532800

__all__ = [
    "get_requires_for_build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "build_wheel",
    "build_sdist",
    "build_editable",
]


# --- pyproject.toml -------------------------------------------------------------


def _load_toml(text: str) -> dict[str, Any]:
    """Parses TOML with tomllib (Python 3.11+), else with _MiniToml, which
    reads the subset a pyproject.toml of this shape uses (Python 3.10)."""
    try:
        import tomllib
    except ImportError:
        return _MiniToml(text).parse()
    return tomllib.loads(text)


class _MiniToml:
    """A reader of the TOML subset pyproject.toml files use: comments,
    ``[table]`` and ``[dotted.table]`` headers, bare or quoted keys, basic and
    literal strings, integers, booleans, arrays (over several lines) and
    inline tables. Anything else is a ValueError naming the line."""

    _BARE = re.compile(r"[A-Za-z0-9_-]+")
    _INT = re.compile(r"[+-]?[0-9]+")
    _ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def fail(self, why: str) -> ValueError:
        line = self.s.count("\n", 0, self.i) + 1
        return ValueError(f"pyproject.toml line {line}: {why}")

    def skip(self, newlines: bool) -> None:
        """Skips blanks and comments (and line ends when newlines)."""
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t" or (newlines and c in "\r\n"):
                self.i += 1
            elif c == "#":
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            else:
                return

    def parse(self) -> dict[str, Any]:
        root: dict[str, Any] = {}
        table = root
        while True:
            self.skip(newlines=True)
            if self.i >= len(self.s):
                return root
            if self.s[self.i] == "[":
                self.i += 1
                table = root
                for name in self.dotted_key("]"):
                    table = table.setdefault(name, {})
                    if not isinstance(table, dict):
                        raise self.fail(f"{name} is not a table")
                self.i += 1
            else:
                key = self.key()
                self.skip(newlines=False)
                if self.s[self.i : self.i + 1] != "=":
                    raise self.fail("expected =")
                self.i += 1
                if key in table:
                    raise self.fail(f"duplicate key {key}")
                table[key] = self.value()
            self.skip(newlines=False)
            if self.i < len(self.s) and self.s[self.i] not in "\r\n":
                raise self.fail("expected the end of the line")

    def dotted_key(self, end: str) -> list[str]:
        names = []
        while True:
            self.skip(newlines=False)
            names.append(self.key())
            self.skip(newlines=False)
            c = self.s[self.i : self.i + 1]
            if c == end:
                return names
            if c != ".":
                raise self.fail(f"expected . or {end}")
            self.i += 1

    def key(self) -> str:
        self.skip(newlines=False)
        if self.s[self.i : self.i + 1] in ('"', "'"):
            return self.string()
        m = self._BARE.match(self.s, self.i)
        if not m:
            raise self.fail("expected a key")
        self.i = m.end()
        return m.group()

    def value(self) -> Any:
        self.skip(newlines=False)
        c = self.s[self.i : self.i + 1]
        if c in ('"', "'"):
            return self.string()
        if c == "[":
            return self.array()
        if c == "{":
            return self.inline_table()
        for word, val in (("true", True), ("false", False)):
            if self.s.startswith(word, self.i):
                self.i += len(word)
                return val
        m = self._INT.match(self.s, self.i)
        if m:
            self.i = m.end()
            return int(m.group())
        raise self.fail("unsupported value")

    def string(self) -> str:
        quote = self.s[self.i]
        if self.s.startswith(quote * 3, self.i):
            raise self.fail("multi-line strings are not supported")
        self.i += 1
        out = []
        while self.i < len(self.s):
            c = self.s[self.i]
            self.i += 1
            if c == quote:
                return "".join(out)
            if c == "\n":
                break
            if c == "\\" and quote == '"':
                e = self.s[self.i : self.i + 1]
                self.i += 1
                if e in self._ESCAPES:
                    out.append(self._ESCAPES[e])
                elif e in ("u", "U"):
                    n = 4 if e == "u" else 8
                    out.append(chr(int(self.s[self.i : self.i + n], 16)))
                    self.i += n
                else:
                    raise self.fail(f"unknown escape \\{e}")
            else:
                out.append(c)
        raise self.fail("unterminated string")

    def array(self) -> list[Any]:
        self.i += 1
        items = []
        while True:
            self.skip(newlines=True)
            if self.s[self.i : self.i + 1] == "]":
                self.i += 1
                return items
            items.append(self.value())
            self.skip(newlines=True)
            c = self.s[self.i : self.i + 1]
            if c == ",":
                self.i += 1
            elif c != "]":
                raise self.fail("expected , or ]")

    def inline_table(self) -> dict[str, Any]:
        self.i += 1
        out: dict[str, Any] = {}
        self.skip(newlines=False)
        if self.s[self.i : self.i + 1] == "}":
            self.i += 1
            return out
        while True:
            key = self.key()
            self.skip(newlines=False)
            if self.s[self.i : self.i + 1] != "=":
                raise self.fail("expected =")
            self.i += 1
            out[key] = self.value()
            self.skip(newlines=False)
            c = self.s[self.i : self.i + 1]
            self.i += 1
            if c == "}":
                return out
            if c != ",":
                raise self.fail("expected , or }")


# --- the project ------------------------------------------------------------------


class _Project:
    """What the build needs from pyproject.toml and the sources."""

    def __init__(self, root: Path = _ROOT) -> None:
        self.root = root
        doc = _load_toml((root / "pyproject.toml").read_text(encoding="utf-8"))
        self.meta: dict[str, Any] = doc["project"]
        tool = doc.get("tool", {}).get("qwed-build", {})
        self.package: str = tool["package"]
        self.sdist_include: list[str] = list(tool.get("sdist-include", []))
        self.name: str = self.meta["name"]
        if "version" in self.meta:
            raise ValueError("pyproject.toml: the version lives in the package's __init__.py")
        self.version = self._version()
        # PEP 427 / PEP 625: the distribution name in file names.
        self.dist = re.sub(r"[-_.]+", "_", self.name).lower()
        self.dist_info = f"{self.dist}-{self.version}.dist-info"

    def _version(self) -> str:
        init = (self.root / self.package / "__init__.py").read_text(encoding="utf-8")
        m = re.search(r'^__version__\s*=\s*"([^"]+)"\s*$', init, re.MULTILINE)
        if not m:
            raise ValueError(f'{self.package}/__init__.py has no line __version__ = "..."')
        return m.group(1)

    def package_files(self) -> list[str]:
        """The package's shippable files, as sorted POSIX paths relative to
        the root: everything but caches, compiled files and hidden files."""
        out = []
        for path in (self.root / self.package).rglob("*"):
            rel = path.relative_to(self.root)
            hidden = any(p.startswith(".") or p == "__pycache__" for p in rel.parts)
            if hidden or not path.is_file():
                continue
            if path.suffix in (".pyc", ".pyo"):
                continue
            out.append(rel.as_posix())
        return sorted(out)

    def metadata(self) -> str:
        """The core metadata (version 2.1) of the distribution."""
        m = self.meta
        lines = [
            "Metadata-Version: 2.1",
            f"Name: {self.name}",
            f"Version: {self.version}",
        ]
        if m.get("description"):
            lines.append(f"Summary: {m['description']}")
        for author in m.get("authors", []):
            if author.get("name") and author.get("email"):
                lines.append(f"Author-email: {author['name']} <{author['email']}>")
            elif author.get("name"):
                lines.append(f"Author: {author['name']}")
        lic = m.get("license")
        if isinstance(lic, dict) and lic.get("text"):
            lines.append(f"License: {lic['text']}")
        if m.get("keywords"):
            lines.append(f"Keywords: {','.join(m['keywords'])}")
        lines += [f"Classifier: {c}" for c in m.get("classifiers", [])]
        lines += [f"Project-URL: {k}, {v}" for k, v in m.get("urls", {}).items()]
        if m.get("requires-python"):
            lines.append(f"Requires-Python: {m['requires-python']}")
        lines += [f"Requires-Dist: {d}" for d in m.get("dependencies", [])]
        for extra, deps in m.get("optional-dependencies", {}).items():
            lines.append(f"Provides-Extra: {extra}")
            lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
        body = ""
        readme = m.get("readme")
        if isinstance(readme, str):
            lines.append("Description-Content-Type: text/markdown")
            body = (self.root / readme).read_text(encoding="utf-8")
        for line in lines:
            if "\n" in line or "\r" in line:
                raise ValueError(f"metadata field spans lines: {line!r}")
        return "\n".join(lines) + "\n\n" + body

    def wheel_file(self) -> str:
        return "Wheel-Version: 1.0\n" f"Generator: {_GENERATOR}\n" "Root-Is-Purelib: true\n" f"Tag: {_TAG}\n"

    def wheel_name(self) -> str:
        return f"{self.dist}-{self.version}-{_TAG}.whl"


# --- archives ---------------------------------------------------------------------


def _timestamp() -> int:
    """SOURCE_DATE_EPOCH when set (reproducible builds), else the zip epoch."""
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", _ZIP_EPOCH)), _ZIP_EPOCH)


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).decode().rstrip("=")


class _Wheel:
    """Writes a wheel: each member is hashed into RECORD, written last."""

    def __init__(self, path: Path, project: _Project) -> None:
        self.project = project
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records: list[tuple[str, str, str]] = []
        self.date = time.gmtime(_timestamp())[:6]

    def add(self, arcname: str, data: bytes) -> None:
        info = zipfile.ZipInfo(arcname, date_time=self.date)
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        self.records.append((arcname, _record_hash(data), str(len(data))))

    def close(self) -> None:
        p = self.project
        self.add(f"{p.dist_info}/METADATA", p.metadata().encode("utf-8"))
        self.add(f"{p.dist_info}/WHEEL", p.wheel_file().encode("utf-8"))
        record = f"{p.dist_info}/RECORD"
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerows(self.records)
        writer.writerow((record, "", ""))
        info = zipfile.ZipInfo(record, date_time=self.date)
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, buf.getvalue().encode("utf-8"))
        self.zip.close()


def _write_dist_info(directory: str, project: _Project) -> str:
    out = Path(directory) / project.dist_info
    out.mkdir(parents=True, exist_ok=True)
    (out / "METADATA").write_text(project.metadata(), encoding="utf-8")
    (out / "WHEEL").write_text(project.wheel_file(), encoding="utf-8")
    return project.dist_info


# --- the PEP 517 and PEP 660 hooks ------------------------------------------------


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    """Nothing: the backend is the standard library."""
    return []


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    """Nothing: the backend is the standard library."""
    return []


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    """Nothing: the backend is the standard library."""
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """Writes ``<dist>-<version>.dist-info`` (METADATA, WHEEL) into
    metadata_directory and returns its name."""
    return _write_dist_info(metadata_directory, _Project())


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """As prepare_metadata_for_build_wheel: an editable install has the same
    metadata."""
    return _write_dist_info(metadata_directory, _Project())


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Builds the wheel into wheel_directory and returns its file name."""
    project = _Project()
    path = Path(wheel_directory) / project.wheel_name()
    wheel = _Wheel(path, project)
    for rel in project.package_files():
        wheel.add(rel, (project.root / rel).read_bytes())
    wheel.close()
    return path.name


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Builds an editable wheel (PEP 660): a .pth file naming the source
    folder, so an edit to the sources takes effect without reinstalling."""
    project = _Project()
    path = Path(wheel_directory) / project.wheel_name()
    wheel = _Wheel(path, project)
    wheel.add(f"__editable__.{project.dist}-{project.version}.pth", f"{project.root}\n".encode())
    wheel.close()
    return path.name


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """Builds ``<dist>-<version>.tar.gz``: PKG-INFO, the sdist-include files
    and the package, under one top folder."""
    project = _Project()
    top = f"{project.dist}-{project.version}"
    name = f"{top}.tar.gz"
    mtime = _timestamp()
    members: dict[str, bytes] = {"PKG-INFO": project.metadata().encode("utf-8")}
    for rel in project.sdist_include + project.package_files():
        members[rel] = (project.root / rel).read_bytes()
    with open(Path(sdist_directory) / name, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=mtime) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for rel in sorted(members):
                    data = members[rel]
                    info = tarfile.TarInfo(f"{top}/{rel}")
                    info.size = len(data)
                    info.mtime = mtime
                    info.mode = 0o644
                    info.uname = info.gname = ""
                    tar.addfile(info, io.BytesIO(data))
    return name
