"""The jars Flink needs beyond PyFlink's distribution (the parquet and avro formats).

Pinned in `jars.toml` (next to this module), fetched with `mvn` from Maven Central the first time
they are needed (Maven checks every jar's checksum: `-C`, strict), and cached outside the tree in
`~/.cache/nexmark/jars/<group>-<hash of the group's list>/`, so a changed pin is a new folder. With
`NEXMARK_JARS_DIR` set, the jars are taken from that folder instead (nothing is fetched): for a
machine without Maven or network, or a cluster's lib/ prepared by hand.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from nexmark.errors import JarsUnavailableError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PINNED = Path(__file__).with_name("jars.toml")
ENV_DIR = "NEXMARK_JARS_DIR"
# The groups the engine always puts on its classpath: the parquet format, zstd included (the
# dataset's compression is the writer's choice). Avro is added only where asked (the benchmark).
DEFAULT_GROUPS = ("parquet", "zstd")
# Which groups each file format needs.
FORMAT_GROUPS = {"csv": (), "parquet": ("parquet", "zstd"), "avro": ("avro", "zstd")}
_COMPLETE = ".complete"  # written last into a cache folder: it holds every jar of its group
MVN_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class Jar:
    group_id: str
    artifact_id: str
    version: str

    @classmethod
    def parse(cls, coordinate: str) -> Jar:
        parts = coordinate.split(":")
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{PINNED.name}: {coordinate!r} is not group:artifact:version")
        return cls(*parts)

    @property
    def file_name(self) -> str:
        return f"{self.artifact_id}-{self.version}.jar"

    def __str__(self) -> str:
        return f"{self.group_id}:{self.artifact_id}:{self.version}"


def _pinned() -> dict:
    with PINNED.open("rb") as fh:
        return tomllib.load(fh)


def groups() -> dict[str, tuple[Jar, ...]]:
    """Every pinned group and its jars, in the file's order."""
    return {
        name: tuple(Jar.parse(c) for c in group["jars"])
        for name, group in _pinned()["groups"].items()
    }


def group_jars(names: Iterable[str]) -> list[Jar]:
    """The jars of the groups `names` (each once, in order)."""
    known = groups()
    out: list[Jar] = []
    for name in names:
        if name not in known:
            raise ValueError(f"no jar group {name!r} in {PINNED.name} (known: {', '.join(known)})")
        out += [j for j in known[name] if j not in out]
    return out


def cache_root() -> Path:
    return Path.home() / ".cache" / "nexmark" / "jars"


def group_dir(name: str) -> Path:
    """The cache folder of one group: its name and a hash of its pinned list."""
    listing = "\n".join(str(j) for j in group_jars([name]))
    return cache_root() / f"{name}-{hashlib.sha256(listing.encode()).hexdigest()[:12]}"


def _what(names: Sequence[str]) -> str:
    return f"Flink's {' and '.join(names)} jars"


def ensure(names: Sequence[str], fetch: bool = True) -> list[Path]:
    """The jar files of the groups `names`, fetched first where missing (if `fetch`).

    Raises:
        JarsUnavailableError: one line naming the missing jars and how to provide them.
    """
    names = list(dict.fromkeys(names))
    if not names:
        return []
    if os.environ.get(ENV_DIR):
        folder = Path(os.environ[ENV_DIR]).expanduser()
        jars = group_jars(names)
        missing = [j.file_name for j in jars if not (folder / j.file_name).is_file()]
        if missing:
            raise JarsUnavailableError(
                f"{_what(names)} are not all in {ENV_DIR}={folder}: missing "
                f"{', '.join(missing)} (pinned in {PINNED}); put them there, or unset {ENV_DIR} "
                f"to fetch them from Maven Central with mvn"
            )
        return [folder / j.file_name for j in jars]
    paths: list[Path] = []
    for name in names:
        folder = group_dir(name)
        jars = group_jars([name])
        if not _complete(folder, jars):
            if not fetch:
                raise JarsUnavailableError(_missing_message(name, folder, jars, "not fetched"))
            _fetch(name, folder, jars)
        paths += [folder / j.file_name for j in jars if folder / j.file_name not in paths]
    return paths


def _complete(folder: Path, jars: Sequence[Jar]) -> bool:
    return (folder / _COMPLETE).is_file() and all((folder / j.file_name).is_file() for j in jars)


def _missing_message(name: str, folder: Path, jars: Sequence[Jar], why: str) -> str:
    return (
        f"{_what([name])} ({', '.join(j.file_name for j in jars)}, pinned in {PINNED}) are "
        f"not in {folder}: {why}; or put the jars in a folder and set {ENV_DIR} to it"
    )


def pom(jars: Sequence[Jar]) -> str:
    """A pom whose dependencies are exactly `jars`, each without its transitive ones."""
    deps = "".join(
        "    <dependency>"
        f"<groupId>{escape(j.group_id)}</groupId><artifactId>{escape(j.artifact_id)}</artifactId>"
        f"<version>{escape(j.version)}</version>"
        "<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion>"
        "</exclusions></dependency>\n"
        for j in jars
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        "  <groupId>nexmark</groupId><artifactId>nexmark-flink-jars</artifactId>"
        "<version>1</version><packaging>pom</packaging>\n"
        f"  <dependencies>\n{deps}  </dependencies>\n</project>\n"
    )


def _fetch(name: str, folder: Path, jars: Sequence[Jar]) -> None:
    """Copy the jars from Maven Central (through the local Maven repository) into `folder`."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JarsUnavailableError(
            _missing_message(
                name, folder, jars, "fetching them needs Maven (mvn), not found on PATH"
            )
        )
    plugin = _pinned()["maven"]["dependency_plugin"]
    folder.parent.mkdir(parents=True, exist_ok=True)
    print(f"nexmark: fetching {_what([name])} from Maven Central into {folder}", file=sys.stderr)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    try:
        (tmp / "pom.xml").write_text(pom(jars))
        out = tmp / "jars"
        command = [
            mvn,
            "-B",  # no colours, no prompts
            "-q",
            "-C",  # strict checksums: a jar whose checksum differs fails
            "-f",
            str(tmp / "pom.xml"),
            f"{plugin}:copy-dependencies",
            f"-DoutputDirectory={out}",
            "-DexcludeTransitive=true",
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=MVN_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            raise JarsUnavailableError(
                _missing_message(name, folder, jars, f"mvn did not finish in {MVN_TIMEOUT_S:.0f} s")
            ) from None
        missing = [j.file_name for j in jars if not (out / j.file_name).is_file()]
        if done.returncode != 0 or missing:
            raise JarsUnavailableError(
                _missing_message(
                    name,
                    folder,
                    jars,
                    f"mvn could not fetch them from Maven Central (exit code {done.returncode}: "
                    f"{_mvn_error(done.stdout + done.stderr)})",
                )
            )
        (out / _COMPLETE).write_text("\n".join(str(j) for j in jars) + "\n")
        try:
            out.rename(folder)
        except OSError:  # another process fetched the same group meanwhile
            if not _complete(folder, jars):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _mvn_error(output: str) -> str:
    """The first line of Maven's output that says what failed, shortened."""
    for line in output.splitlines():
        if line.startswith("[ERROR]") and line[7:].strip():
            text = re.sub(r"\s+", " ", line[7:]).strip()
            return text if len(text) <= 300 else text[:297] + "..."
    return "no error message"


def link_into(folder: Path, jars: Iterable[Path]) -> None:
    """Symbolic links to `jars` in `folder` (a cluster's lib/), where not there already."""
    folder.mkdir(parents=True, exist_ok=True)
    for jar in jars:
        link = folder / jar.name
        if not link.exists():
            link.symlink_to(jar.resolve())
