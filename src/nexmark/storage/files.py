"""The few file operations the dataset code needs, on a local path or an `s3://` location.

A location is a `Path` (local: every call is the plain `pathlib`/`open` one, so local datasets
behave exactly as before) or an `S3Url` (through pyarrow's S3FileSystem, `s3.filesystem()`,
settings from the environment). An S3 error becomes a one-line `StorageError`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Union

from nexmark.storage.s3 import S3Url, StorageError, explain, filesystem, is_s3

Location = Union[Path, S3Url]  # noqa: UP007 - the alias is evaluated at run time


def location(where: str | os.PathLike | S3Url) -> Location:
    """An S3Url for `s3://...` (UsageError if malformed), else a Path."""
    if isinstance(where, S3Url):
        return where
    if is_s3(where):
        return S3Url.parse(str(where))
    return Path(where)


@contextlib.contextmanager
def _errors(where: S3Url) -> Iterator[None]:
    try:
        yield
    except FileNotFoundError:
        raise
    except OSError as exc:
        from nexmark.storage.s3 import S3Settings

        raise StorageError(explain(exc, where, S3Settings.from_env())) from None


def _info(where: S3Url):
    with _errors(where):
        return filesystem().get_file_info(where.fs_path)


def as_engine_path(where: Location) -> str:
    """A location as an engine takes it: an absolute local path, or the `s3://` URL (read
    through the engine's own S3 file system, each engine's `s3_access`)."""
    return str(where.resolve()) if isinstance(where, Path) else str(where)


def is_file(where: Location) -> bool:
    if isinstance(where, Path):
        return where.is_file()
    from pyarrow import fs as pafs

    return _info(where).type == pafs.FileType.File


def size(where: Location) -> int:
    """Bytes of a file (FileNotFoundError if there is none)."""
    if isinstance(where, Path):
        return where.stat().st_size
    from pyarrow import fs as pafs

    info = _info(where)
    if info.type != pafs.FileType.File:
        raise FileNotFoundError(str(where))
    return info.size


def open_input(where: Location) -> BinaryIO:
    """A binary file open for reading (random access: Parquet readers seek)."""
    if isinstance(where, Path):
        return open(where, "rb")  # noqa: SIM115 - the caller closes it
    with _errors(where):
        return filesystem().open_input_file(where.fs_path)


def read_text(where: Location) -> str:
    if isinstance(where, Path):
        return where.read_text()
    with open_input(where) as fh:
        return fh.read().decode()


def write_text(where: Location, text: str) -> None:
    """A small file written whole (an object is; a local file is written in place)."""
    if isinstance(where, Path):
        where.write_text(text)
    else:
        write_bytes(where, text.encode())


def mtime(where: Location) -> float:
    """A file's modification time, epoch seconds (FileNotFoundError if there is none)."""
    if isinstance(where, Path):
        return where.stat().st_mtime
    from pyarrow import fs as pafs

    info = _info(where)
    if info.type != pafs.FileType.File:
        raise FileNotFoundError(str(where))
    return info.mtime.timestamp()


def files_under(where: Location) -> list[tuple[Location, int, float]]:
    """(file, bytes, mtime) of every file under a folder, recursively; [] if there is none.
    A file removed while the folder is walked is left out."""
    if isinstance(where, Path):
        found = []
        for p in where.rglob("*") if where.is_dir() else ():
            try:
                st = p.stat()
            except FileNotFoundError:
                continue
            if p.is_file():
                found.append((p, st.st_size, st.st_mtime))
        return found
    from pyarrow import fs as pafs

    with _errors(where):
        infos = filesystem().get_file_info(
            pafs.FileSelector(where.fs_path, allow_not_found=True, recursive=True)
        )
    return [
        (S3Url(where.bucket, i.path.split("/", 1)[1]), i.size, i.mtime.timestamp())
        for i in infos
        if i.type == pafs.FileType.File
    ]


def remove_tree(where: Location) -> None:
    """A folder and everything under it (a prefix's objects); none is fine."""
    if isinstance(where, Path):
        shutil.rmtree(where, ignore_errors=True)
    else:
        delete_under(where)


def copy_tree(source: Location, target: Location) -> None:
    """Every file under `source` to the same name under `target` (on a store, server-side
    copies); FileNotFoundError if a file vanished while it was copied."""
    if isinstance(source, Path) and isinstance(target, Path):
        try:
            shutil.copytree(source, target)
        except shutil.Error as exc:
            raise FileNotFoundError(str(exc)) from None
        return
    if not (isinstance(source, S3Url) and isinstance(target, S3Url)):
        raise ValueError(f"cannot copy {source} to {target}: one is local, one on a store")
    for found in objects(source):
        copy(found, target / found.key[len(source.key) :].lstrip("/"))


def write_bytes(where: S3Url, data: bytes) -> None:
    """One object, whole: S3 makes it visible complete or not at all."""
    with _errors(where), filesystem().open_output_stream(where.fs_path) as out:
        out.write(data)


def upload(local: Path, where: S3Url) -> None:
    """Copy a local file to an object (multipart for large ones)."""
    from pyarrow import fs as pafs

    with _errors(where):
        pafs.copy_files(
            str(local),
            where.fs_path,
            source_filesystem=pafs.LocalFileSystem(),
            destination_filesystem=filesystem(),
        )


def download(where: S3Url, local: Path) -> None:
    """Copy an object to a local file."""
    from pyarrow import fs as pafs

    local.parent.mkdir(parents=True, exist_ok=True)
    with _errors(where):
        pafs.copy_files(
            where.fs_path,
            str(local),
            source_filesystem=filesystem(),
            destination_filesystem=pafs.LocalFileSystem(),
        )


def children(where: Location) -> list[Location]:
    """The entries directly in a folder (files and sub-folders); [] if there is none."""
    if isinstance(where, Path):
        return sorted(where.glob("*")) if where.is_dir() else []
    from pyarrow import fs as pafs

    with _errors(where):
        infos = filesystem().get_file_info(
            pafs.FileSelector(where.fs_path, allow_not_found=True, recursive=False)
        )
    return sorted(S3Url(where.bucket, i.path.split("/", 1)[1]) for i in infos)


def objects(where: S3Url) -> list[S3Url]:
    """Every object under a prefix (recursive)."""
    from pyarrow import fs as pafs

    with _errors(where):
        infos = filesystem().get_file_info(
            pafs.FileSelector(where.fs_path, allow_not_found=True, recursive=True)
        )
    return sorted(
        S3Url(where.bucket, i.path.split("/", 1)[1]) for i in infos if i.type == pafs.FileType.File
    )


def delete(where: Location) -> None:
    """One file (an object); a local file already gone is fine."""
    if isinstance(where, Path):
        where.unlink(missing_ok=True)
        return
    with _errors(where):
        filesystem().delete_file(where.fs_path)


def delete_under(where: S3Url) -> None:
    """Every object under a prefix (a run's scratch prefix, its checkpoints), folder markers
    included; none is fine."""
    with _errors(where), contextlib.suppress(FileNotFoundError):
        filesystem().delete_dir(where.fs_path)


def make_dir(where: S3Url) -> None:
    """A folder marker (an empty `prefix/` object): a prefix a reader lists before anything is
    in it (Flink's file source watching a feed's prefix) must exist as a folder."""
    with _errors(where):
        filesystem().create_dir(where.fs_path, recursive=True)


def copy(source: S3Url, target: S3Url) -> None:
    """Copy an object within the store (server-side: S3's CopyObject, no bytes through us).
    The copy appears whole or not at all, as an upload does."""
    with _errors(target):
        filesystem().copy_file(source.fs_path, target.fs_path)


def arrow_source(where: Location) -> tuple[str, object | None]:
    """(path, filesystem) as pyarrow's readers take them (filesystem None: local)."""
    if isinstance(where, Path):
        return str(where), None
    return where.fs_path, filesystem()
