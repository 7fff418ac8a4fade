"""`cdcsync jars fetch`: the jars Spark needs, downloaded into the user cache for an installed cdcsync."""

from __future__ import annotations

import sys

import typer

from cdcsync.cli.app import app
from cdcsync.toolchain.download import DEFAULT_REPOSITORY

jars = typer.Typer(name="jars", no_args_is_help=True, help="The jars Spark needs (Hudi, Spark's Kafka source, S3A, "
                   "MSK IAM): fetch them into the user cache.")
app.add_typer(jars, name="jars")


@jars.command("fetch")
def fetch(
    repository: str = typer.Option(DEFAULT_REPOSITORY, "--repository", metavar="URL",
                                   help="A Maven-2 repository to fetch from: a mirror (Artifactory, Nexus) or "
                                   "file://…/.m2/repository."),
    json_out: bool = typer.Option(False, "--json", help="Print a summary as JSON on stdout."),
) -> None:
    """Download the jars of cdcsync's manifest into $XDG_CACHE_HOME/cdcsync/jars/<version set> (default ~/.cache),
    each checked against its SHA-1. A second run downloads nothing; an interrupted one goes on where it stopped; a
    damaged jar in the cache is fetched again. Starts no JVM."""
    from cdcsync.reporting import emit_json
    from cdcsync.toolchain import download
    from cdcsync.toolchain.jars import cache_dir, version_set

    dest = cache_dir()
    bar = sys.stderr.isatty() and not json_out
    with download.BarProgress() if bar else download.PlainProgress() as progress:
        outcomes = download.fetch(dest, repository, progress)
    fetched = [o for o in outcomes if o.action != "present"]
    for o in fetched:
        if o.action == "replaced":
            print(f"{o.jar.file_name}: the cached copy failed its checksum; fetched again", file=sys.stderr)
    total = sum(o.fetched for o in fetched)
    if fetched:
        print(f"jars: fetched {len(fetched)} ({total / 1e6:.1f} MB), {len(outcomes) - len(fetched)} already present "
              f"and verified; {dest} is complete", file=sys.stderr)
    else:
        print(f"jars: all {len(outcomes)} present and verified in {dest}; nothing downloaded", file=sys.stderr)
    if json_out:
        emit_json({"dir": str(dest), "version_set": version_set(), "repository": repository, "bytes": total,
                   "jars": {o.jar.file_name: o.action for o in outcomes}})
