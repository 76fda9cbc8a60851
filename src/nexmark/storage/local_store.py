"""`--s3-local`: a local s3proxy for one command, unless a store is configured already.

`with local_store(True, [S3Url("data", "ds"), S3Url("ckpt", "run")]) as note:` (the command's
parsed locations) starts s3proxy on loopback over a folder kept between runs
(`$NEXMARK_DATA_DIR/../s3-local`, else `~/.cache/nexmark/s3-local`: a dataset generated there
is reused by the next run), makes the buckets the locations name, and sets the standard AWS
variables for the command (the engines' JVMs and the verify reference inherit them). Leaving the
block by any path (the end, an error, Ctrl-C, SIGTERM as KeyboardInterrupt) stops the server and
restores the variables; the server dies with this process besides (PR_SET_PDEATHSIG), so no JVM
is left behind.

With an endpoint configured (`AWS_ENDPOINT_URL[_S3]`) the flag starts nothing: that store is used
(`note` says so).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from nexmark.errors import UsageError
from nexmark.storage.files import Location
from nexmark.storage.s3 import ENDPOINT_ENV, S3Url
from nexmark.storage.s3proxy import S3Proxy

_VARIABLES = (*ENDPOINT_ENV, "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")


def local_root() -> Path:
    """The local store's folder, kept between runs."""
    data = os.environ.get("NEXMARK_DATA_DIR")
    base = Path(data).parent if data else Path.home() / ".cache" / "nexmark"
    return base / "s3-local"


@contextlib.contextmanager
def local_store(enabled: bool, locations: Sequence[Location | None]) -> Iterator[str | None]:
    """See the module's doc. Yields a line for the user (None when nothing was done)."""
    buckets = sorted({w.bucket for w in locations if isinstance(w, S3Url)})
    if not enabled:
        yield None
        return
    if not buckets:
        raise UsageError("--s3-local: no s3:// location given (--data or --checkpoints)")
    if any(os.environ.get(k) for k in ENDPOINT_ENV):
        yield "--s3-local: an S3 endpoint is configured (AWS_ENDPOINT_URL): using it"
        return
    saved = {k: os.environ.get(k) for k in _VARIABLES}
    with S3Proxy(local_root(), buckets=tuple(buckets)) as server:
        try:
            os.environ.update(server.env())
            yield f"--s3-local: s3proxy at {server.endpoint} over {server.blobs}"
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
