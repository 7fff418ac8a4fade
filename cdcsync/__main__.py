from __future__ import annotations

from cdcsync.cli.app import main

main()
