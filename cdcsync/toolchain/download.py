"""`cdcsync jars fetch`: the manifest's jars from a Maven-2 repository (Maven Central, a mirror, a file:// folder)
into a folder, each checked against the manifest's SHA-1. A jar already there and intact is not fetched again; a
transfer cut short goes on from its .part file; a jar renamed into place has passed its checksum."""

from __future__ import annotations

import hashlib
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol, Self

from cdcsync.errors import ToolchainError
from cdcsync.exit_codes import ExitCode
from cdcsync.toolchain.jars import Jar, manifest

DEFAULT_REPOSITORY = "https://repo1.maven.org/maven2"
_CHUNK = 1 << 20


class Progress(Protocol):
    """What fetch() tells about its transfers: PlainProgress and BarProgress below."""

    def begin(self, jar: Jar, url: str) -> None: ...

    def advance(self, n: int) -> None: ...


@dataclass(frozen=True)
class Outcome:
    jar: Jar
    action: str  # "present" (intact, not fetched), "downloaded", "resumed" or "replaced" (a corrupt copy)
    fetched: int  # bytes transferred


def sha1_of(path: Path) -> str:
    h = hashlib.sha1()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            h.update(block)
    return h.hexdigest()


def fetch(dest: Path, repository: str = DEFAULT_REPOSITORY, progress: Progress | None = None) -> list[Outcome]:
    """Make `dest` hold exactly-verified copies of every manifest jar; `progress` sees each transfer."""
    progress = progress or PlainProgress(quiet=True)
    dest.mkdir(parents=True, exist_ok=True)
    outcomes = []
    for jar in manifest():
        final = dest / jar.file_name
        if final.exists() and sha1_of(final) == jar.sha1:
            outcomes.append(Outcome(jar, "present", 0))
            continue
        action = "replaced" if final.exists() else "downloaded"
        final.unlink(missing_ok=True)  # corrupt or short: its checksum said so
        url = jar.path_in(repository)
        progress.begin(jar, url)
        resumed, fetched = _download(jar, url, final, progress)
        outcomes.append(Outcome(jar, "resumed" if resumed and action == "downloaded" else action, fetched))
    return outcomes


def _download(jar: Jar, url: str, final: Path, progress: Progress) -> tuple[bool, int]:
    """(went on from a .part file, bytes transferred); the .part becomes `final` once its SHA-1 matches."""
    part = final.with_name(final.name + ".part")
    resumed, fetched = _transfer(url, part, jar, progress)
    if sha1_of(part) != jar.sha1 and resumed:
        part.unlink()  # the kept part was itself bad: one fresh transfer
        resumed, more = _transfer(url, part, jar, progress)
        fetched += more
    got = sha1_of(part)
    if got != jar.sha1:
        part.unlink()
        raise ToolchainError(f"{url} does not match the jar manifest: its SHA-1 is {got}, the manifest's {jar.sha1} "
                             f"({jar.coordinates})", url=url, expected=jar.sha1, got=got,
                             hint="the repository serves another file under that name (a stale or altered mirror); "
                             f"fetch from Maven Central ({DEFAULT_REPOSITORY}, the default) or fix the mirror")
    os.replace(part, final)
    return resumed, fetched


def _transfer(url: str, part: Path, jar: Jar, progress: Progress) -> tuple[bool, int]:
    """Append to `part` from where it stops (a server that ignores Range restarts it); (resumed, bytes)."""
    offset = part.stat().st_size if part.exists() else 0
    if offset >= jar.size:  # as long as the jar or longer: nothing to go on from
        part.unlink()
        offset = 0
    stream, resumed = _open(url, offset, jar)
    fetched = 0
    with stream, part.open("ab" if resumed else "wb") as out:
        while block := stream.read(_CHUNK):
            out.write(block)
            fetched += len(block)
            progress.advance(len(block))
    return resumed, fetched


def _open(url: str, offset: int, jar: Jar) -> tuple[BinaryIO, bool]:
    """(readable stream, whether it starts at `offset`)."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        path = Path(urllib.request.url2pathname(parsed.path))
        if not path.is_file():
            raise _not_served(url, jar, "no such file")
        f = path.open("rb")
        f.seek(offset)
        return f, offset > 0
    if parsed.scheme not in ("http", "https"):
        raise ToolchainError(f"the repository URL {url.removesuffix(jar.path_in(''))} is not http(s):// or file://",
                             hint="give a Maven-2 repository's base URL, e.g. https://repo1.maven.org/maven2")
    headers = {"User-Agent": "cdcsync-jars-fetch", **({"Range": f"bytes={offset}-"} if offset else {})}
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60)
    except urllib.error.HTTPError as e:
        if e.code == 416:  # the part is complete or the server's file changed: start over
            return _open(url, 0, jar)
        raise _not_served(url, jar, f"HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError) as e:
        host = parsed.netloc
        raise ToolchainError(f"the jar repository {host} cannot be reached ({getattr(e, 'reason', e)})",
                             exit_code=ExitCode.UNREACHABLE, url=url,
                             hint="check the network (or a proxy: https_proxy), or pass --repository with a Maven "
                             "mirror you can reach (Artifactory, Nexus, or file://~/.m2/repository)") from None
    return response, response.status == 206


def _not_served(url: str, jar: Jar, why: str) -> ToolchainError:
    return ToolchainError(f"{jar.coordinates} is not served at {url} ({why})", url=url,
                          hint="pass --repository with the base URL of a Maven-2 repository that mirrors Maven Central "
                          f"(the one holding org/, com/, …), or leave it out for {DEFAULT_REPOSITORY}")


class PlainProgress:
    """A line per jar on stderr (not a terminal, or --json)."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def begin(self, jar: Jar, url: str) -> None:
        if not self.quiet:
            print(f"fetching {jar.file_name} ({jar.size / 1e6:.1f} MB) from {url}", file=sys.stderr, flush=True)

    def advance(self, n: int) -> None:
        pass


class BarProgress:
    """One progress bar on a terminal's stderr: bytes of the jars fetched so far, the current jar's name beside it."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                            console=Console(stderr=True), transient=True)
        self.task = self.bar.add_task("jars", total=0)

    def __enter__(self) -> Self:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def begin(self, jar: Jar, url: str) -> None:
        total = self.bar.tasks[0].total or 0
        self.bar.update(self.task, description=jar.file_name, total=total + jar.size)

    def advance(self, n: int) -> None:
        self.bar.advance(self.task, n)
