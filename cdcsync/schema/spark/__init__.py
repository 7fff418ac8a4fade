"""The Spark halves of schema work: table columns, per-batch inference and evolution on the same lattice."""
