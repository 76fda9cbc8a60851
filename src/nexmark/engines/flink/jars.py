"""The jars Flink needs beyond PyFlink's distribution (the parquet and avro formats).

Pinned in `jars.toml` (next to this module), fetched and cached by `nexmark.maven`. With
`NEXMARK_JARS_DIR` set, the jars are taken from that folder instead (nothing is fetched): for a
machine without network, or a cluster's lib/ prepared by hand.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from nexmark.errors import JarsUnavailableError
from nexmark.maven import Jar, PinnedJars, link_into, pom

__all__ = ["Jar", "ensure", "group_dir", "group_jars", "groups", "link_into", "pom"]

PINNED = Path(__file__).with_name("jars.toml")
ENV_DIR = "NEXMARK_JARS_DIR"
# The groups the engine always puts on its classpath: the parquet format, zstd included (the
# dataset's compression is the writer's choice). Avro is added only where asked (the benchmark).
DEFAULT_GROUPS = ("parquet", "zstd")
# Which groups each file format needs.
FORMAT_GROUPS = {"csv": (), "parquet": ("parquet", "zstd"), "avro": ("avro", "zstd")}

_FLINK = PinnedJars(PINNED, "Flink's")
_HINT = f"; or put the jars in a folder and set {ENV_DIR} to it"


def groups() -> dict[str, tuple[Jar, ...]]:
    return _FLINK.groups()


def group_jars(names: Iterable[str]) -> list[Jar]:
    return _FLINK.group_jars(names)


def group_dir(name: str) -> Path:
    return _FLINK.group_dir(name)


def ensure(names: Sequence[str], fetch: bool = True) -> list[Path]:
    """The jar files of the groups `names`, fetched first where missing (if `fetch`), or taken
    from $NEXMARK_JARS_DIR.

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
                f"{_FLINK.label(names)} are not all in {ENV_DIR}={folder}: missing "
                f"{', '.join(missing)} (pinned in {PINNED}); put them there, or unset {ENV_DIR} "
                f"to fetch them from Maven Central"
            )
        return [folder / j.file_name for j in jars]
    try:
        return _FLINK.ensure(names, fetch=fetch)
    except JarsUnavailableError as error:
        raise JarsUnavailableError(f"{error}{_HINT}") from None
