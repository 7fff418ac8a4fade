"""[catalog]: each table cdcsync writes (main, routed, dead-letter) registered by name in a Hive metastore-compatible
catalog through Spark's catalog (`CREATE TABLE … USING hudi LOCATION …`), so `spark.sql("SELECT … FROM db.t")` works.

Spark's catalog rather than Hudi's meta-sync: with an embedded Derby metastore, Hudi's sync would open the database
from a second class loader of the same JVM, which Derby refuses. Registering writes nothing to the Hudi timeline
(cdcsync's offsets live in its commits). Hudi's catalog reads the columns from the table itself; the metastore's copy
is brought up to date after a schema change too, for engines that read the metastore's schema."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdcsync import jvm_errors
from cdcsync.errors import ConfigError, SinkError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdcsync.config.model import CatalogConfig


class Catalog:
    def __init__(self, spark: SparkSession, cfg: CatalogConfig) -> None:
        """`cfg`: the config's [catalog]; the session must have been built with its settings (runtime.session)."""
        if spark.conf.get("spark.sql.catalogImplementation", "in-memory") != "hive":
            raise ConfigError("[catalog] needs a session with Spark's Hive catalog, and this one was built without",
                              hint="let cdcsync build the session, or pass the settings `cdcsync spark-submit-args` "
                              "prints", key="catalog")
        self._spark = spark
        self._db = cfg.database
        self._known: set[str] = set()
        try:
            spark.sql(f"CREATE DATABASE IF NOT EXISTS `{self._db}`")
        except Exception as e:  # py4j's error or Spark's AnalysisException: name the metastore and its cause
            where = cfg.metastore_uri or cfg.metastore_dir
            raise SinkError(f"the [catalog] metastore at {where} cannot be opened: {jvm_errors.summary(e)}",
                            hint="an embedded Derby metastore admits one process at a time: close any other session "
                            "using it (a pyspark shell, another run), or set catalog.metastore_uri to a shared "
                            "metastore", path=where) from e

    def sync(self, name: str, path: str, columns_changed: bool) -> None:
        """Register `name` at `path` the first time this process writes it, and again when its columns changed."""
        if name in self._known and not columns_changed:
            return
        ident = f"`{self._db}`.`{name}`"
        try:
            if not self._spark.catalog.tableExists(name, self._db):
                self._spark.sql(f"CREATE TABLE {ident} USING hudi LOCATION '{_quoted(path)}'")
            else:
                self._spark.catalog.refreshTable(f"{self._db}.{name}")
                self._store_schema(name)
        except Exception as e:  # the batch is committed: say so, and that the next process registers it again
            raise SinkError(f"the batch is committed, but registering {self._db}.{name} in the [catalog] metastore "
                            f"failed: {jvm_errors.summary(e)}", hint="the next run registers it again once the "
                            "metastore answers; nothing is written twice", path=path) from e
        self._known.add(name)

    def _store_schema(self, name: str) -> None:
        """The metastore's schema set to the columns Hudi's table now has, when they differ."""
        session = self._spark._jsparkSession.sessionState().catalog()
        external = session.externalCatalog()
        stored = external.getTable(self._db, name)
        current = self._spark.table(f"{self._db}.{name}").schema
        partitions = set(stored.partitionColumnNames().mkString("\u0000").split("\u0000")) - {""}
        data = [f for f in current.fields if f.name not in partitions]
        if [f.name for f in data] == list(stored.dataSchema().fieldNames()):
            return
        from pyspark.sql.types import StructType

        jtype = self._spark._jsparkSession.parseDataType(StructType(data).json())
        external.alterTableDataSchema(self._db, name, jtype)


def _quoted(path: str) -> str:
    return path.replace("\\", "\\\\").replace("'", "\\'")
