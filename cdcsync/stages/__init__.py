"""A table's batch, stage by stage: typed (typed.py), classified and counted (classified.py), written (write_set.py),
and the steps they call."""
