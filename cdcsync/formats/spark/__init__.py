"""The Spark SQL halves of the formats: the same envelopes decoded on the executors (see envelope.py)."""
