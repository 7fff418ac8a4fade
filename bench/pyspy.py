"""Where a profiled run's wall time went on the Python side (bench.cron --py-spy): py-spy's collapsed stacks, idle
samples included, so a py4j call waiting on the JVM counts where it was made.

    python -m bench.pyspy FILE [FILE ...] [--rate 100] [--top 40] [--match cdcsync/ ...] [--lines]

Prints, per function of a file whose path contains a --match, the seconds of wall time spent inside it (inclusive,
each stack counted once per function; --lines: per line of it), the mean over the files given.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<fn>.+?) \((?P<file>[^:()]+)(?::(?P<line>\d+))?\)$")


def inclusive(text: str, match: list[str], lines: bool = False) -> tuple[Counter[str], int]:
    """Samples inside each matching function ("file:function", or "file:function:line"), and all samples."""
    out: Counter[str] = Counter()
    total = 0
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        seen = set()
        for frame in stack.split(";"):
            m = _FRAME.match(frame.strip())
            if m and any(x in m["file"] for x in match):
                seen.add(f"{m['file']}:{m['fn']}" + (f":{m['line']}" if lines else ""))
        for name in seen:
            out[name] += n
    return out, total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--rate", type=int, default=100, help="py-spy's samples per second (bench.cron records 100)")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--match", action="append", help="a part of the paths of the files to count (cdcsync/)")
    ap.add_argument("--lines", action="store_true", help="per line, not per function")
    args = ap.parse_args(argv)
    sums: Counter[str] = Counter()
    total = 0
    for f in args.files:
        found, n = inclusive(f.read_text(), args.match or ["cdcsync/"], args.lines)
        sums.update(found)
        total += n
    runs = len(args.files)
    print(f"{total / runs / args.rate:8.2f} s  sampled wall time per run ({runs} runs)")
    for name, n in sums.most_common(args.top):
        print(f"{n / runs / args.rate:8.2f} s  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
