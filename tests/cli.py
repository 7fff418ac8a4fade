"""The one way tests run the `cdcsync` command: a real process (`python -m cdcsync`), as a user or a service
manager would, with its exit code, stdout and stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cdcsync(*args, env: dict | None = None, timeout: float = 300, python_flags: tuple = ()) \
        -> subprocess.CompletedProcess:
    """Run `cdcsync ARGS…` to completion; `env` adds to (or, with a None value, removes from) the environment."""
    full = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    return subprocess.run([sys.executable, *python_flags, "-m", "cdcsync", *map(str, args)], cwd=ROOT, env=full,
                          capture_output=True, text=True, timeout=timeout)


def start(*args, env: dict | None = None) -> subprocess.Popen:
    """Start `cdcsync ARGS…` in the background (stdout and stderr piped, text mode)."""
    full = {**os.environ, **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "cdcsync", *map(str, args)], cwd=ROOT, env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
