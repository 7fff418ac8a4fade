"""The JVM parts cdcsync runs on: the pinned versions, the jar manifest, where the jars are, and fetching them."""
