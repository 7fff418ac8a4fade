"""cdcsync: Kafka change-data-capture topics into Apache Hudi tables through PySpark."""

__version__ = "0.1.0"
