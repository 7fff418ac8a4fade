"""The one SparkSession: fetched jars through spark.jars (never --packages), Hudi's required settings, and
defaults sized for a small machine. pyspark is imported here and only here at call time."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cdcsync import storage
from cdcsync.errors import ToolchainError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdcsync.config.model import Config

_T = TypeVar("_T")

# Hudi needs Kryo and its session extension; the rest keeps a local run light.
BASE_CONF = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.sql.session.timeZone": "UTC",
    # delete markers ordered by a TIMESTAMP column: Parquet keeps no statistics of INT96 for filters to skip by
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.driver.memory": "2g",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    "spark.hadoop.fs.file.impl.disable.cache": "false",
    # the status store keeps every query's plan text; wide CDC plans made 1,000 of them fill a 2 GB driver
    "spark.sql.ui.retainedExecutions": "20",
    "spark.ui.retainedJobs": "50",
    "spark.ui.retainedStages": "50",
    "spark.ui.retainedTasks": "5000",
    "spark.ui.dagGraph.retainedRootRDDs": "50",
    "spark.sql.streaming.ui.retainedQueries": "10",
    # a parse shared by the right sides of ANDs (the envelope's rare-case checks) is otherwise hoisted and run for
    # every record: the Debezium decode took 7.1 s per 1M records with it eager, 4.6 s without
    "spark.sql.subexpressionElimination.skipForShortcutExpr": "true",
    # a batch's cached classified rows barely compress (their text is dropped once typed), yet each cached column
    # tries every encoding: the same peak memory without it, and 20 x 50,000 changes ran 2 % faster (docs/benchmarks.md)
    "spark.sql.inMemoryColumnarStorage.compressed": "false",
}


# Hudi sizes records with JOL, which tries to attach agents to the JVM (slow, and refused here); its fallback is
# what it ends up using anyway.
_JOL_QUIET = "-Djol.skipDynamicAttach=true -Djol.skipHotspotSAAttach=true"


def jars_dir() -> Path:
    """CDCSYNC_JARS_DIR, else a clone's complete bundles/spark/jars, else the user cache (toolchain/jars.py)."""
    from cdcsync.toolchain.jars import locate

    return locate().path


def spark_jars() -> list[str]:
    from cdcsync.toolchain.jars import ENV_VAR, cache_dir, locate

    found = locate()
    jars = sorted(str(p) for p in found.path.glob("*.jar"))
    names = " ".join(Path(j).name for j in jars)
    if found.origin == ENV_VAR and ("hudi-spark" not in names or "spark-sql-kafka" not in names):
        raise ToolchainError(f"the Hudi bundle and Spark's Kafka source are missing from {found.path} "
                             f"({ENV_VAR})", hint=f"fill it with 'make bundles' in a clone (bundles/spark/jars), or "
                             f"unset {ENV_VAR} and run 'cdcsync jars fetch'")
    if not found.complete:
        # no download behind a command's back: a service must not reach the network (or stall) when it starts
        raise ToolchainError(f"the jars Spark needs are not in {cache_dir()} ({len(found.missing)} missing, "
                             f"{found.missing[0]} first) nor in a clone's bundles/spark/jars",
                             hint="run 'cdcsync jars fetch' (or 'make bundles' in a clone, or set CDCSYNC_JARS_DIR "
                             "to a folder holding them)")
    return jars


def check_java() -> None:
    home = os.environ.get("JAVA_HOME")
    if not (home and (Path(home) / "bin" / "java").exists()) and not shutil.which("java"):
        raise ToolchainError("Java is not installed",
                             hint="install Java 17 (Debian: apt-get install openjdk-17-jdk-headless)")


def submitted() -> bool:
    """Under spark-submit, whose JVM is already running with the command line's master, jars and settings."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def launch_conf(conf: dict[str, str] | None = None) -> dict[str, str]:
    """Every setting a cdcsync session starts with: the jars, quiet logging, BASE_CONF, then `conf` (java options
    given there are added to ours, not replacing the quiet logging). `spark-submit-args` prints these."""
    log4j = Path(__file__).with_name("log4j2.properties")
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j} {_JOL_QUIET}"
    conf = dict(conf or {})
    return {"spark.jars": ",".join(spark_jars()),
            "spark.driver.extraJavaOptions": f"{java_opts} {conf.pop('spark.driver.extraJavaOptions', '')}".strip(),
            "spark.executor.extraJavaOptions":
                f"{java_opts} {conf.pop('spark.executor.extraJavaOptions', '')}".strip(),
            # a background compaction (sinks/compaction.py) shares the cores with the batches
            "spark.scheduler.mode": "FAIR",
            "spark.scheduler.allocation.file": f"file:{Path(__file__).with_name('fairscheduler.xml')}",
            **BASE_CONF, **conf}


def service_conf(conf: dict[str, str]) -> dict[str, str]:
    """`conf` for a long-running `run`: the driver's heap reserved and touched at start (-Xms = its memory,
    AlwaysPreTouch), so the service's footprint is its setting from the first minute, not a size G1 grows towards the
    limit and gives back (its live heap is a few hundred MB), and no batch pays the heap's first page faults. A -Xms
    in the config's own java options wins."""
    opts = conf.get("spark.driver.extraJavaOptions", "")
    if "-Xms" in opts:
        return conf
    memory = conf.get("spark.driver.memory", BASE_CONF["spark.driver.memory"])
    return {**conf, "spark.driver.extraJavaOptions": f"-Xms{memory} -XX:+AlwaysPreTouch {opts}".strip()}


def build_session(app_name: str = "cdcsync", master: str = "local[2]",
                  conf: dict[str, str] | None = None) -> SparkSession:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if submitted():  # spark-submit's command line already holds the master, jars and settings
        builder = builder.config(map={k: v for k, v in (conf or {}).items() if k != "spark.jars"})
    else:
        check_java()
        if master.startswith("local") and "SPARK_LOCAL_IP" not in os.environ:
            os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # one machine: loopback, no "hostname resolves" warning
        builder = builder.master(master).config(map={**launch_conf(conf)})
    spark = _with_stdout_on_stderr(lambda: _jvm_ignoring_sigterm(builder.getOrCreate))
    spark.sparkContext.setLogLevel("WARN")
    _init_hudi_metadata_payload(spark)
    _init_jol_quietly(spark)
    _resolve_functions_once()
    return spark


class _JvmFunctions:
    """Spark's `functions` and its members, resolved once per gateway. PySpark looks `functions` up by its short
    name, then the function, on every `F.*` call and every column named by text: 3 py4j round trips where 1 does,
    and the short name misses in each package py4j imports first, a look-up that scans every jar (a quarter of a
    small batch's round trips, 12 % of the driver's py4j time)."""

    def __init__(self) -> None:
        # id(JVMView) → (the view, functions' JavaClass, {name: member})
        self._by_view: dict[int, tuple[Any, Any, dict[str, Any]]] = {}

    def member(self, jvm: Any, name: str) -> Any:
        entry = self._by_view.get(id(jvm))
        if entry is None or entry[0] is not jvm:
            entry = self._by_view[id(jvm)] = (jvm, jvm.org.apache.spark.sql.functions, {})
        members = entry[2]
        if name not in members:
            members[name] = getattr(entry[1], name)
        return members[name]


_FUNCTIONS = _JvmFunctions()


def _resolve_functions_once() -> None:
    from pyspark.sql import column, functions
    from pyspark.sql.utils import get_active_spark_context  # what pyspark.sql.column calls it by

    def active() -> Any:
        return get_active_spark_context()._jvm

    def lit(literal: Any) -> Any:
        return _FUNCTIONS.member(active(), "lit")(literal)

    functions._get_jvm_function = lambda name, sc: _FUNCTIONS.member(sc._jvm, name)
    # functions imports it from column, unexported: an error under --strict only (no_implicit_reexport)
    functions._create_column_from_literal = lit  # type: ignore[attr-defined]
    column._create_column_from_literal = lit
    column._create_column_from_name = lambda name: _FUNCTIONS.member(active(), "col")(name)


def _init_jol_quietly(spark: SparkSession) -> None:
    # JOL prints "# WARNING: Unable to attach …" to System.out when it first starts, whatever the flags; start it
    # here, once per driver JVM, with that stream muted
    jvm: Any = spark._jvm  # py4j's view: set once a session exists
    system = jvm.java.lang.System
    out = system.out
    system.setOut(jvm.java.io.PrintStream(jvm.java.io.OutputStream.nullOutputStream()))
    try:
        jvm.org.apache.hudi.org.openjdk.jol.vm.VM.current()
    finally:
        system.setOut(out)


def _init_hudi_metadata_payload(spark: SparkSession) -> None:
    # Hudi 1.2.0 bug (issue 18): HoodieMetadataPayload compares schemas by identity; loaded first by a metadata-table
    # compaction (a process's first write) it keeps a different instance than the write handles → AIOOBE, exit 74.
    jvm: Any = spark._jvm  # py4j's view: set once a session exists
    jvm.java.lang.Class.forName("org.apache.hudi.metadata.HoodieMetadataPayload", True,
                                jvm.java.lang.Thread.currentThread().getContextClassLoader())


def config_conf(cfg: Config) -> dict[str, str]:
    """A config's own Spark settings: [catalog]'s, then [spark]'s (`master` aside); java options add up (a service's
    -Xms, the user's own, and an embedded metastore's derby.system.home)."""
    conf = {k: v for k, v in cfg.spark.items() if k != "master"}
    if not cfg.catalog:
        return conf
    catalog, key = cfg.catalog.spark_settings(), "spark.driver.extraJavaOptions"
    if key in catalog and key in conf:
        conf[key] = f"{catalog[key]} {conf[key]}"
    return catalog | conf


def submit_args(cfg: Config) -> list[str]:
    """spark-submit's arguments for `cfg`, up to and with the entry script: the master, then every launch setting
    (jars and driver memory only take effect on the command line). No secret is among them: [storage] credentials
    are set in the running session, and a secret-looking [spark] key is refused."""
    from cdcsync.errors import ConfigError
    from cdcsync.secrets import is_secret_key

    secret = next((k for k in cfg.spark if is_secret_key(k)), None)
    if secret:
        raise ConfigError(f"{cfg.path}: [spark] {secret} would be printed on the spark-submit command line, where "
                          "any local user can read it", file=str(cfg.path), key=f"spark.{secret}",
                          hint="give S3 credentials in [storage] (set inside the session) or through the "
                          "environment, not in [spark]")
    import sys

    args = ["--master", cfg.spark.get("master", "local[*]"), "--name", f"cdcsync-{cfg.sink.table_name}"]
    # the Python that has cdcsync: the driver's, and the executors' for [schema] validate_with (unless [spark] says)
    python = {"spark.pyspark.driver.python": sys.executable, "spark.pyspark.python": sys.executable}
    for k, v in launch_conf(python | config_conf(cfg)).items():
        args += ["--jars", v] if k == "spark.jars" else ["--conf", f"{k}={v}"]
    return [*args, str(Path(__file__).resolve().parents[1] / "_submit" / "main.py")]


def for_config(cfg: Config, purpose: str = "") -> SparkSession:
    """The session a command runs a config with: [spark] settings, `master` among them (default local[*])."""
    name = "-".join(filter(None, ("cdcsync", purpose, cfg.sink.table_name)))
    spark = build_session(name, cfg.spark.get("master", "local[*]"), config_conf(cfg))
    if cfg.run.log_level != "warn":
        set_jvm_log_level(spark, cfg.run.log_level)
    storage.apply(spark, cfg.storage)
    return spark


def set_jvm_log_level(spark: SparkSession, level: str) -> None:
    """Every Spark, Hudi and Kafka logger at `level`, the ones log4j2.properties quiets included (--verbose)."""
    jvm: Any = spark._jvm  # py4j's view: set once a session exists
    jvm.org.apache.logging.log4j.core.config.Configurator.setAllLevels(
        "", jvm.org.apache.logging.log4j.Level.toLevel(level.upper()))


def _jvm_ignoring_sigterm(start: Callable[[], _T]) -> _T:
    """Launch the JVM with SIGTERM ignored (inherited across exec, and then the JVM installs no handler of its own):
    a service manager's stop signals the whole process group, and the JVM must outlive the batch cdcsync finishes."""
    import signal
    import subprocess

    from pyspark import java_gateway

    def popen(command: list[str], preexec_fn: Callable[[], object] | None = None,
              **kwargs: Any) -> subprocess.Popen[bytes]:
        def child() -> None:
            if preexec_fn:
                preexec_fn()  # PySpark's own: SIGINT ignored
            signal.signal(signal.SIGTERM, signal.SIG_IGN)

        return subprocess.Popen(command, preexec_fn=child, **kwargs)

    # setattr: a monkeypatch, a function where pyspark's module holds subprocess's class (mypy types the name a class)
    setattr(java_gateway, "Popen", popen)  # noqa: B010
    try:
        return start()
    finally:
        setattr(java_gateway, "Popen", subprocess.Popen)  # noqa: B010


def _with_stdout_on_stderr(start: Callable[[], _T]) -> _T:
    """The JVM inherits our fd 1 at launch; give it fd 2 instead, so nothing it prints can corrupt `--json`."""
    import sys

    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        return start()
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
