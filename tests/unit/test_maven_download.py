"""Jars downloaded from Maven Central without `mvn`: each checked against its published SHA-1.

A local HTTP server stands in for Central (the layout group/artifact/version/file), so these
tests need no network; `mvn` is kept off PATH so the download path is the one taken.
"""

from __future__ import annotations

import hashlib
import http.server
import threading
from pathlib import Path

import pytest

from nexmark import maven
from nexmark.errors import JarsUnavailableError

JAR = maven.Jar("org.example", "tiny", "1.0")
BODY = b"PK\x03\x04 not really a jar, but bytes with a checksum"


@pytest.fixture
def central(tmp_path, monkeypatch):
    """A folder served over HTTP as Maven Central; yields the folder of JAR's version."""
    root = tmp_path / "central"
    folder = root / "org/example/tiny/1.0"
    folder.mkdir(parents=True)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):  # keep the test output clean
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(maven, "CENTRAL", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setattr(maven, "cache_root", lambda: tmp_path / "cache")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # no mvn
    yield folder
    server.shutdown()


def pinned(tmp_path: Path, transitive: bool = False) -> maven.PinnedJars:
    path = tmp_path / "jars.toml"
    extra = "transitive = true\n" if transitive else ""
    maven_section = '[maven]\ndependency_plugin = "x:y:1"\n'
    path.write_text(f'[groups.tiny]\njars = ["{JAR}"]\n{extra}{maven_section}')
    return maven.PinnedJars(path, "Test's")


def test_central_url_follows_the_repository_layout():
    assert JAR.central_url() == f"{maven.CENTRAL}/org/example/tiny/1.0/tiny-1.0.jar"


def test_without_mvn_the_jar_is_downloaded_and_checked(central, tmp_path):
    (central / "tiny-1.0.jar").write_bytes(BODY)
    (central / "tiny-1.0.jar.sha1").write_text(hashlib.sha1(BODY).hexdigest() + "  tiny-1.0.jar\n")
    group = pinned(tmp_path)
    (jar,) = group.ensure(["tiny"])
    assert jar.read_bytes() == BODY and jar.parent == group.group_dir("tiny")
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [jar.parent.name]  # no temp left
    (central / "tiny-1.0.jar").unlink()  # cached now: Central is not asked again
    assert group.ensure(["tiny"]) == [jar]


def test_a_jar_whose_checksum_differs_is_refused_and_nothing_kept(central, tmp_path):
    (central / "tiny-1.0.jar").write_bytes(BODY + b"tampered")
    (central / "tiny-1.0.jar.sha1").write_text(hashlib.sha1(BODY).hexdigest())
    with pytest.raises(JarsUnavailableError) as caught:
        pinned(tmp_path).ensure(["tiny"])
    message = str(caught.value)
    assert "\n" not in message and "does not match its published SHA-1" in message
    assert not list((tmp_path / "cache").iterdir())


def test_a_jar_missing_from_central_is_one_line(central, tmp_path):
    with pytest.raises(JarsUnavailableError) as caught:
        pinned(tmp_path).ensure(["tiny"])
    message = str(caught.value)
    assert "\n" not in message and "mvn" in message and "tiny-1.0.jar" in message


def test_a_transitive_group_needs_maven_and_says_how_to_install_it(central, tmp_path):
    with pytest.raises(JarsUnavailableError) as caught:
        pinned(tmp_path, transitive=True).ensure(["tiny"])
    message = str(caught.value)
    assert "\n" not in message and "apt-get install maven" in message
