"""`cdcsync jars fetch`'s downloads against a fake Maven repository served by a local http.server: exact files,
nothing fetched twice, a cut transfer resumed with a Range request, a damaged cached jar replaced, a repository's
wrong bytes refused by the manifest's SHA-1."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from pathlib import Path

import pytest

from cdcsync.errors import ToolchainError
from cdcsync.exit_codes import ExitCode
from cdcsync.toolchain import download, jars
from cdcsync.toolchain.jars import Jar


def _jar(artifact: str, body: bytes, classifier: str = "") -> Jar:
    return Jar("org.example", artifact, "1.0", classifier, hashlib.sha1(body).hexdigest(), len(body))


BODIES = {"alpha": b"alpha-jar " * 50_000, "beta": b"beta" * 3}
JARS = (_jar("alpha", BODIES["alpha"]), _jar("beta", BODIES["beta"], "all"))


class Repo(http.server.ThreadingHTTPServer):
    """Serves `files` {url path: bytes}; honours Range unless `ranges` is off; logs (path, Range header)."""

    def __init__(self, files: dict[str, bytes]):
        self.files, self.ranges, self.requests = files, True, []
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/maven2"


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        repo = self.server
        repo.requests.append((self.path, self.headers.get("Range")))
        body = repo.files.get(self.path.removeprefix("/maven2"))
        if body is None:
            self.send_error(404)
            return
        start = int(self.headers["Range"][6:-1]) if self.headers.get("Range") and repo.ranges else 0
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        self.wfile.write(body[start:])

    def log_message(self, *args):
        pass


@pytest.fixture
def repo(monkeypatch):
    monkeypatch.setattr(download, "manifest", lambda: JARS)
    server = Repo({j.path_in(""): BODIES[j.artifact] for j in JARS})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _actions(outcomes) -> dict[str, str]:
    return {o.jar.artifact: o.action for o in outcomes}


def test_fetch_downloads_each_jar_then_nothing(repo, tmp_path):
    assert _actions(download.fetch(tmp_path, repo.url)) == {"alpha": "downloaded", "beta": "downloaded"}
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {
        "alpha-1.0.jar": BODIES["alpha"], "beta-1.0-all.jar": BODIES["beta"]}
    assert [p for p, _ in repo.requests] == ["/maven2/org/example/alpha/1.0/alpha-1.0.jar",
                                             "/maven2/org/example/beta/1.0/beta-1.0-all.jar"]
    again = download.fetch(tmp_path, repo.url)
    assert _actions(again) == {"alpha": "present", "beta": "present"} and len(repo.requests) == 2
    assert sum(o.fetched for o in again) == 0


@pytest.mark.parametrize("ranges", [True, False], ids=["range", "server-ignores-range"])
def test_a_cut_transfer_goes_on_from_its_part_file(repo, tmp_path, ranges):
    repo.ranges = ranges
    cut = 123_456
    (tmp_path / "alpha-1.0.jar.part").write_bytes(BODIES["alpha"][:cut])
    outcomes = download.fetch(tmp_path, repo.url)
    assert (tmp_path / "alpha-1.0.jar").read_bytes() == BODIES["alpha"]
    assert not list(tmp_path.glob("*.part"))
    alpha = next(o for o in outcomes if o.jar.artifact == "alpha")
    assert repo.requests[0][1] == f"bytes={cut}-"
    assert (alpha.action, alpha.fetched) == (("resumed", len(BODIES["alpha"]) - cut) if ranges
                                             else ("downloaded", len(BODIES["alpha"])))


def test_a_bad_part_file_is_fetched_again_whole(repo, tmp_path):
    (tmp_path / "alpha-1.0.jar.part").write_bytes(b"garbage" * 10)
    download.fetch(tmp_path, repo.url)
    assert (tmp_path / "alpha-1.0.jar").read_bytes() == BODIES["alpha"]
    assert [r for p, r in repo.requests if "alpha" in p] == ["bytes=70-", None]


def test_a_damaged_cached_jar_is_detected_and_replaced(repo, tmp_path):
    download.fetch(tmp_path, repo.url)
    damaged = bytearray(BODIES["alpha"])
    damaged[1000] ^= 0xFF  # same size: only the checksum tells
    (tmp_path / "alpha-1.0.jar").write_bytes(bytes(damaged))
    (tmp_path / "beta-1.0-all.jar").write_bytes(b"be")  # short
    assert _actions(download.fetch(tmp_path, repo.url)) == {"alpha": "replaced", "beta": "replaced"}
    assert (tmp_path / "alpha-1.0.jar").read_bytes() == BODIES["alpha"]


def test_wrong_bytes_from_the_repository_are_refused(repo, tmp_path):
    repo.files[JARS[1].path_in("")] = b"evil"
    with pytest.raises(ToolchainError) as e:
        download.fetch(tmp_path, repo.url)
    assert f"its SHA-1 is {hashlib.sha1(b'evil').hexdigest()}, the manifest's {JARS[1].sha1}" in e.value.message
    assert "mirror" in e.value.hint
    assert not (tmp_path / "beta-1.0-all.jar").exists() and not list(tmp_path.glob("*.part"))


def test_a_jar_the_repository_lacks_names_it_and_the_fix(repo, tmp_path):
    del repo.files[JARS[0].path_in("")]
    with pytest.raises(ToolchainError) as e:
        download.fetch(tmp_path, repo.url)
    assert "org.example:alpha:1.0 is not served at" in e.value.message and "HTTP 404" in e.value.message
    assert "--repository" in e.value.hint and download.DEFAULT_REPOSITORY in e.value.hint


def test_an_unreachable_repository_is_exit_69(monkeypatch, tmp_path):
    from devtools.local_kafka import free_port

    monkeypatch.setattr(download, "manifest", lambda: JARS)
    with pytest.raises(ToolchainError) as e:
        download.fetch(tmp_path, f"http://127.0.0.1:{free_port()}/maven2")
    assert e.value.exit_code == ExitCode.UNREACHABLE and "cannot be reached" in e.value.message


def test_a_file_url_is_a_repository_too(monkeypatch, tmp_path):
    monkeypatch.setattr(download, "manifest", lambda: JARS)
    m2 = tmp_path / "m2"
    for j in JARS:
        target = Path(j.path_in(str(m2)))
        target.parent.mkdir(parents=True)
        target.write_bytes(BODIES[j.artifact])
    assert _actions(download.fetch(tmp_path / "cache", m2.as_uri())) == {"alpha": "downloaded", "beta": "downloaded"}


def test_the_default_repository_is_maven_central():
    assert download.DEFAULT_REPOSITORY == "https://repo1.maven.org/maven2"
    hudi = next(j for j in jars.manifest() if j.artifact.startswith("hudi-spark"))
    assert hudi.path_in(download.DEFAULT_REPOSITORY).startswith("https://repo1.maven.org/maven2/org/apache/hudi/")


def test_the_command_fills_the_xdg_cache_and_reports_json(repo, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from cdcsync.cli.app import app

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(jars, "manifest", lambda: JARS)
    runner = CliRunner()
    first = runner.invoke(app, ["jars", "fetch", "--repository", repo.url, "--json"])
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert summary["jars"] == {"alpha-1.0.jar": "downloaded", "beta-1.0-all.jar": "downloaded"}
    assert summary["dir"] == str(jars.cache_dir()) and Path(summary["dir"]).parent == tmp_path / "cdcsync" / "jars"
    second = runner.invoke(app, ["jars", "fetch", "--repository", repo.url])
    assert second.exit_code == 0 and "nothing downloaded" in second.stderr
