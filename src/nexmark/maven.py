"""Jars from Maven Central, pinned in a TOML file and cached outside the tree.

A pinned file names groups (what one capability needs) of `group:artifact:version` jars. Each
group is fetched with `mvn` the first time it is needed (Maven checks every jar's checksum:
`-C`, strict) into `~/.cache/nexmark/jars/<group>-<hash of the group's pins>/`, so a changed pin
is a new folder. Without `mvn`, a group taken jar by jar is downloaded from Maven Central
directly, each jar checked against the SHA-1 Central publishes beside it (what `mvn -C` checks):
the engines' own jars need no Maven on the machine. A group is taken jar by jar (nothing
transitive: the engine's own classpath holds the rest) unless it says `transitive = true` (a
server such as a Kafka broker: its pinned roots and everything they depend on, the resolved
list written into the cache folder).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from nexmark.errors import JarsUnavailableError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_COMPLETE = ".complete"  # written last into a cache folder: it lists every jar of its group
MVN_TIMEOUT_S = 900.0
CENTRAL = "https://repo.maven.apache.org/maven2"
DOWNLOAD_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Jar:
    group_id: str
    artifact_id: str
    version: str

    @classmethod
    def parse(cls, coordinate: str, where: str = "jars.toml") -> Jar:
        parts = coordinate.split(":")
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{where}: {coordinate!r} is not group:artifact:version")
        return cls(*parts)

    @property
    def file_name(self) -> str:
        return f"{self.artifact_id}-{self.version}.jar"

    def __str__(self) -> str:
        return f"{self.group_id}:{self.artifact_id}:{self.version}"

    def central_url(self) -> str:
        folder = f"{self.group_id.replace('.', '/')}/{self.artifact_id}/{self.version}"
        return f"{CENTRAL}/{folder}/{self.file_name}"


def cache_root() -> Path:
    return Path.home() / ".cache" / "nexmark" / "jars"


@dataclass(frozen=True)
class PinnedJars:
    """The groups of one pinned file; `what` names them in messages ("Flink's", "Kafka's")."""

    path: Path
    what: str

    def _pinned(self) -> dict:
        with self.path.open("rb") as fh:
            return tomllib.load(fh)

    def groups(self) -> dict[str, tuple[Jar, ...]]:
        """Every pinned group and its jars (its roots, if transitive), in the file's order."""
        return {
            name: tuple(Jar.parse(c, self.path.name) for c in group["jars"])
            for name, group in self._pinned()["groups"].items()
        }

    def transitive(self, name: str) -> bool:
        return bool(self._pinned()["groups"].get(name, {}).get("transitive", False))

    def group_jars(self, names: Iterable[str]) -> list[Jar]:
        """The pinned jars of the groups `names` (each once, in order)."""
        known = self.groups()
        out: list[Jar] = []
        for name in names:
            if name not in known:
                raise ValueError(
                    f"no jar group {name!r} in {self.path.name} (known: {', '.join(known)})"
                )
            out += [j for j in known[name] if j not in out]
        return out

    def group_dir(self, name: str) -> Path:
        """The cache folder of one group: its name and a hash of its pins."""
        listing = "\n".join(str(j) for j in self.group_jars([name]))
        listing += "\ntransitive" if self.transitive(name) else ""
        return cache_root() / f"{name}-{hashlib.sha256(listing.encode()).hexdigest()[:12]}"

    def label(self, names: Sequence[str]) -> str:
        return f"{self.what} {' and '.join(names)} jars"

    def ensure(self, names: Sequence[str], fetch: bool = True) -> list[Path]:
        """The jar files of the groups `names`, fetched first where missing (if `fetch`).

        Raises:
            JarsUnavailableError: one line naming the missing jars and how to provide them.
        """
        paths: list[Path] = []
        for name in dict.fromkeys(names):
            folder = self.group_dir(name)
            jars = self.group_jars([name])
            if not _complete(folder, jars):
                if not fetch:
                    raise JarsUnavailableError(self.missing(name, folder, "not fetched"))
                self._fetch(name, folder, jars)
            paths += [p for p in _listed(folder) if p not in paths]
        return paths

    def missing(self, name: str, folder: Path, why: str, hint: str = "") -> str:
        jars = ", ".join(j.file_name for j in self.group_jars([name]))
        return (
            f"{self.label([name])} ({jars}, pinned in {self.path}) are not in {folder}: {why}"
            + hint
        )

    def _fetch(self, name: str, folder: Path, jars: Sequence[Jar]) -> None:
        """Copy the jars from Maven Central (through the local Maven repository) into `folder`."""
        mvn = shutil.which("mvn")
        transitive = self.transitive(name)
        if mvn is None and transitive:
            raise JarsUnavailableError(
                self.missing(
                    name,
                    folder,
                    "resolving what they depend on needs Maven (mvn), not found on PATH",
                    " (Debian: apt-get install maven)",
                )
            )
        folder.parent.mkdir(parents=True, exist_ok=True)
        print(
            f"nexmark: fetching {self.label([name])} from Maven Central into {folder}",
            file=sys.stderr,
        )
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
        try:
            if mvn is None:
                self._download(name, folder, jars, tmp)
            else:
                self._copy_with_mvn(mvn, name, folder, jars, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _copy_with_mvn(
        self, mvn: str, name: str, folder: Path, jars: Sequence[Jar], tmp: Path
    ) -> None:
        """The group through Maven's dependency plugin (and local repository), checksums strict."""
        transitive = self.transitive(name)
        plugin = self._pinned()["maven"]["dependency_plugin"]
        (tmp / "pom.xml").write_text(pom(jars, transitive=transitive))
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
            f"-DexcludeTransitive={'false' if transitive else 'true'}",
            "-DincludeScope=runtime",
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=MVN_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            raise JarsUnavailableError(
                self.missing(name, folder, f"mvn did not finish in {MVN_TIMEOUT_S:.0f} s")
            ) from None
        absent = [j.file_name for j in jars if not (out / j.file_name).is_file()]
        if done.returncode != 0 or absent:
            raise JarsUnavailableError(
                self.missing(
                    name,
                    folder,
                    f"mvn could not fetch them from Maven Central (exit code "
                    f"{done.returncode}: {_mvn_error(done.stdout + done.stderr)})",
                )
            )
        # The pinned roots first (in their order), then what they pulled in, sorted.
        fetched = [j.file_name for j in jars]
        fetched += sorted(p.name for p in out.glob("*.jar") if p.name not in fetched)
        _publish(out, fetched, folder, jars)

    def _download(self, name: str, folder: Path, jars: Sequence[Jar], tmp: Path) -> None:
        """Each jar straight from Maven Central, kept only if its SHA-1 is Central's."""
        out = tmp / "jars"
        out.mkdir()
        for jar in jars:
            try:
                with urllib.request.urlopen(
                    jar.central_url() + ".sha1", timeout=DOWNLOAD_TIMEOUT_S
                ) as answer:
                    expected = answer.read().decode().split()[0].lower()
                url = jar.central_url()
                with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as answer:
                    body = answer.read()
            except (urllib.error.URLError, OSError, IndexError) as exc:
                why = f"mvn is not on PATH and downloading {jar.central_url()} failed: {exc}"
                raise JarsUnavailableError(self.missing(name, folder, why)) from None
            if hashlib.sha1(body).hexdigest() != expected:
                why = f"{jar.file_name} from Maven Central does not match its published SHA-1"
                raise JarsUnavailableError(self.missing(name, folder, why))
            (out / jar.file_name).write_bytes(body)
        _publish(out, [j.file_name for j in jars], folder, jars)


def _publish(out: Path, fetched: Sequence[str], folder: Path, jars: Sequence[Jar]) -> None:
    """Mark `out` complete (listing `fetched`, pinned roots first) and move it to `folder`."""
    (out / _COMPLETE).write_text("\n".join(fetched) + "\n")
    try:
        out.rename(folder)
    except OSError:  # another process fetched the same group meanwhile
        if not _complete(folder, jars):
            raise


def pom(jars: Sequence[Jar], transitive: bool = False) -> str:
    """A pom whose dependencies are `jars` (each without its own ones, unless `transitive`)."""
    exclusions = (
        ""
        if transitive
        else "<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion>"
        "</exclusions>"
    )
    deps = "".join(
        "    <dependency>"
        f"<groupId>{escape(j.group_id)}</groupId><artifactId>{escape(j.artifact_id)}</artifactId>"
        f"<version>{escape(j.version)}</version>{exclusions}</dependency>\n"
        for j in jars
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        "  <groupId>nexmark</groupId><artifactId>nexmark-jars</artifactId>"
        "<version>1</version><packaging>pom</packaging>\n"
        f"  <dependencies>\n{deps}  </dependencies>\n</project>\n"
    )


def _listed(folder: Path) -> list[Path]:
    """The jars a cache folder's marker lists (file names; coordinates in older folders)."""
    names = (folder / _COMPLETE).read_text().split()
    return [folder / (Jar.parse(n).file_name if ":" in n else n) for n in names]


def _complete(folder: Path, jars: Sequence[Jar]) -> bool:
    """The folder's marker is there, names every pinned jar, and every jar it names exists."""
    if not (folder / _COMPLETE).is_file():
        return False
    listed = _listed(folder)
    names = {p.name for p in listed}
    return all(j.file_name in names for j in jars) and all(p.is_file() for p in listed)


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


# Kafka's pins (sources/kafka/jars.toml): the broker's jars and each engine's connector, read
# here in the ground layer by the loader and by both engines (which may not import the
# sources' layer): one reader of one file.
KAFKA_JARS = PinnedJars(Path(__file__).parent / "sources" / "kafka" / "jars.toml", "Kafka's")
