"""The jars Spark needs, as the manifest (cdcsync/jars.lock) lists them, and the folder a command takes them from:
CDCSYNC_JARS_DIR, else a clone's bundles/spark/jars, else the user cache `cdcsync jars fetch` fills. No JVM, no
network: reading files only."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
REPO_ROOT = PACKAGE.parent
LOCK = PACKAGE / "jars.lock"
CLONE_JARS = REPO_ROOT / "bundles" / "spark" / "jars"
ENV_VAR = "CDCSYNC_JARS_DIR"


@dataclass(frozen=True)
class Jar:
    group: str
    artifact: str
    version: str
    classifier: str
    sha1: str
    size: int

    @property
    def coordinates(self) -> str:
        return ":".join(filter(None, (self.group, self.artifact, self.version, self.classifier)))

    @property
    def file_name(self) -> str:
        """The name Maven gives it (copy-dependencies and the repository layout alike)."""
        return f"{self.artifact}-{self.version}{'-' + self.classifier if self.classifier else ''}.jar"

    def path_in(self, repository: str) -> str:
        """Its URL in a Maven-2 layout repository (Maven Central, a mirror, a local ~/.m2/repository)."""
        return "/".join((repository.rstrip("/"), *self.group.split("."), self.artifact, self.version, self.file_name))


def parse_lock(text: str) -> list[Jar]:
    """`group:artifact:version[:classifier] sha1 size` a line; `#` starts a comment."""
    jars = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        coords = fields[0].split(":")
        if len(fields) != 3 or len(coords) not in (3, 4) or len(fields[1]) != 40 or not fields[2].isdigit():
            raise ValueError(f"jars.lock line {n}: expected 'group:artifact:version[:classifier] sha1 size', "
                             f"got {line!r}")
        group, artifact, version, *classifier = coords
        jars.append(Jar(group, artifact, version, "".join(classifier), fields[1].lower(), int(fields[2])))
    return jars


def render_lock(jars: list[Jar], header: str) -> str:
    lines = [f"# {h}" for h in header.splitlines()]
    lines += [f"{j.coordinates} {j.sha1} {j.size}" for j in sorted(jars, key=lambda j: j.coordinates)]
    return "\n".join(lines) + "\n"


@cache
def manifest() -> tuple[Jar, ...]:
    return tuple(parse_lock(LOCK.read_text()))


@cache
def versions() -> dict[str, str]:
    """versions.env: inside the package when installed from a wheel (setup.py copies it), else the clone's."""
    path = next(p for p in (PACKAGE / "versions.env", REPO_ROOT / "versions.env") if p.exists())
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            k, _, v = line.partition("=")
            out[k.strip()] = v.strip()
    return out


def version_set(jars: tuple[Jar, ...] | None = None) -> str:
    """The cache folder's name: Spark's and Hudi's versions for a reader, a digest of the manifest for uniqueness."""
    jars = manifest() if jars is None else jars
    digest = hashlib.sha1("".join(sorted(f"{j.coordinates} {j.sha1}\n" for j in jars)).encode()).hexdigest()
    v = versions()
    return f"spark-{v['SPARK_VERSION']}_hudi-{v['HUDI_VERSION']}_{digest[:10]}"


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/cdcsync/jars/<version set> (~/.cache when unset or, as the XDG spec says, not absolute)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "cdcsync" / "jars" / version_set()


def kafka_client_version() -> str:
    return next(j.version for j in manifest() if (j.group, j.artifact) == ("org.apache.kafka", "kafka-clients"))


@dataclass(frozen=True)
class JarFolder:
    path: Path
    origin: str  # "CDCSYNC_JARS_DIR", "clone" or "user cache"
    missing: tuple[str, ...]  # the file names it lacks; empty when complete

    @property
    def complete(self) -> bool:
        return not self.missing


def missing_from(folder: Path) -> tuple[str, ...]:
    """The manifest's jars not in `folder` at their recorded size (a checksum would read 100 MB at every start)."""
    return tuple(j.file_name for j in manifest() if not _has(folder / j.file_name, j.size))


def _has(path: Path, size: int) -> bool:
    try:
        return path.stat().st_size == size
    except OSError:
        return False


def _clone_missing() -> tuple[str, ...]:
    """A clone's folder is complete when bundles/fetch.sh finished: its stamp lists the jars the pom resolved."""
    stamp = CLONE_JARS / ".stamp"
    if not stamp.exists():
        return ("bundles/spark/jars/.stamp",)
    return tuple(n for n in stamp.read_text().splitlines()[1:] if not (CLONE_JARS / n).exists())


def candidates() -> list[JarFolder]:
    """Every folder looked at, in lookup order (a clone only when running from the repository)."""
    if os.environ.get(ENV_VAR):
        path = Path(os.environ[ENV_VAR])
        return [JarFolder(path, ENV_VAR, () if path.is_dir() else (str(path),))]
    found = []
    if (CLONE_JARS.parent / "pom.xml").exists():
        found.append(JarFolder(CLONE_JARS, "clone", _clone_missing()))
    found.append(JarFolder(cache_dir(), "user cache", missing_from(cache_dir())))
    return found


def locate() -> JarFolder:
    """The first complete folder in lookup order; CDCSYNC_JARS_DIR wins even when incomplete (it was asked for), and
    with none complete, the user cache (what `cdcsync jars fetch` fills)."""
    folders = candidates()
    return next((f for f in folders if f.complete or f.origin == ENV_VAR), folders[-1])


def pyspark_version() -> str:
    """pyspark/version.py run on its own: importing the pyspark package would load py4j and all of Spark's Python."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return "not installed"
    version = importlib.util.spec_from_file_location(
        "_cdcsync_pyspark_version", Path(spec.submodule_search_locations[0]) / "version.py")
    assert version is not None and version.loader is not None  # a .py path always has a source loader
    module = importlib.util.module_from_spec(version)
    version.loader.exec_module(module)
    return str(module.__version__)  # pyspark/version.py sets a str; the checker sees a module attribute


def version_lines(cdcsync_version: str) -> list[str]:
    """`cdcsync --version`: cdcsync's, Spark's, Hudi's and the Kafka client's versions, and where the jars come from."""
    v, found = versions(), locate()
    state = "complete" if found.complete else f"incomplete: {len(found.missing)} missing; run 'cdcsync jars fetch'"
    return [f"cdcsync {cdcsync_version}",
            f"Spark {pyspark_version()} (pyspark)",
            f"Hudi {v['HUDI_VERSION']} ({v['HUDI_SPARK_BUNDLE']})",
            f"Kafka client {kafka_client_version()} (kafka-clients, Spark's Kafka source)",
            f"jars: {found.path} ({found.origin}, {state})"]
