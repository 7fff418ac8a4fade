"""cdcsync under spark-submit, which runs a .py file: `spark-submit $(cdcsync spark-submit-args c.toml) run c.toml`."""

from cdcsync.cli.app import main

main()
