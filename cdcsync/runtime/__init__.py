"""What a run stands on: the Spark session, the writer lock, metrics, the compactor, fault injection."""
