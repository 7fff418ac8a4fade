"""`make jars-lock`: writes cdcsync/jars.lock, the jars `cdcsync jars fetch` downloads, from what bundles/spark/pom.xml
resolved (bundles/fetch.sh leaves Maven's list in bundles/spark/jars/.resolved). Each SHA-1 is the one Maven Central
served beside the jar (its .sha1 in the local repository), checked against the jar's bytes.

    python -m devtools.jars_lock            # after `make bundles`
"""

from __future__ import annotations

import sys
from pathlib import Path

from cdcsync.toolchain.download import sha1_of
from cdcsync.toolchain.jars import CLONE_JARS, LOCK, Jar, render_lock

HEADER = """The jars Spark needs, as bundles/spark/pom.xml resolves them; `make jars-lock` writes this file (do not
edit).
`cdcsync jars fetch` downloads exactly these and checks each against its SHA-1 (Maven Central's .sha1).
group:artifact:version[:classifier] sha1 size"""


def resolved(listing: str) -> list[tuple[list[str], Path]]:
    """([group, artifact, version, classifier], local file) per line of `mvn dependency:list` with absolute paths:
    `g:a:type[:classifier]:version:scope:/path.jar[ -- module …]`."""
    out = []
    for line in listing.splitlines():
        token = line.strip().split(" ", 1)[0]
        if token.count(":") < 5:
            continue  # the listing's title and blank lines
        head, _, path = token.partition(":/")
        parts = head.split(":")
        group, artifact, _type, *rest = parts
        classifier, version = (rest[0], rest[1]) if len(rest) == 3 else ("", rest[0])
        out.append(([group, artifact, version, classifier], Path("/" + path)))
    return out


def lock_entry(coords: list[str], local: Path) -> Jar:
    """The jar bundles/spark/jars holds for `coords`, its SHA-1 checked against Maven Central's .sha1 beside `local`."""
    jar = Jar(*coords, sha1="0" * 40, size=0)
    copy = CLONE_JARS / jar.file_name
    sha1 = sha1_of(copy)
    served = local.with_name(local.name + ".sha1")
    if served.exists() and served.read_text().split()[0].lower() != sha1:
        sys.exit(f"error: {copy} does not match Maven Central's {served}: run 'make bundles' again")
    return Jar(*coords, sha1=sha1, size=copy.stat().st_size)


def main() -> None:
    listing = CLONE_JARS / ".resolved"
    if not listing.exists():
        sys.exit(f"error: {listing} is missing: run 'make bundles' first")
    jars = [lock_entry(coords, local) for coords, local in resolved(listing.read_text())]
    LOCK.write_text(render_lock(jars, HEADER))
    print(f"{LOCK}: {len(jars)} jars, {sum(j.size for j in jars) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
