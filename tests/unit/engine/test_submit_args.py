"""`cdcsync spark-submit-args`: the master, the jars and every launch setting on the command line, the entry
script last, and never a secret."""

from __future__ import annotations

import shlex
from pathlib import Path

from cdcsync.exit_codes import ExitCode
from tests.cli import cdcsync
from tests.configs import minimal, write


def test_the_line_carries_master_jars_settings_and_the_entry_script(tmp_path):
    cfg = write(tmp_path, minimal("s3a://lake/t") + '\n[spark]\nmaster = "spark://h:7077"\n"spark.executor.cores" = '
                '"2"\n\n[storage]\naccess_key_id = "A"\nsecret_access_key = "s3cr3t-9q"\n')
    p = cdcsync("spark-submit-args", cfg, jvm_free=True)
    assert p.returncode == 0, p.stderr
    args = shlex.split(p.stdout)
    assert args[:2] == ["--master", "spark://h:7077"] and Path(args[-1]).name == "main.py"
    assert Path(args[-1]).parent.name == "_submit"  # a folder of its own: nothing in it shadows a standard module
    jars = args[args.index("--jars") + 1].split(",")
    assert any("hudi-spark" in j for j in jars) and any("spark-sql-kafka" in j for j in jars)
    confs = dict(a.split("=", 1) for a in args[1:] if "=" in a and not a.startswith("-"))
    assert confs["spark.executor.cores"] == "2" and confs["spark.driver.memory"] == "2g"
    assert "log4j2.configurationFile" in confs["spark.driver.extraJavaOptions"]
    assert "s3cr3t" not in p.stdout + p.stderr


def test_a_secret_in_spark_settings_is_refused(tmp_path):
    cfg = write(tmp_path, minimal() + '\n[spark]\n"spark.hadoop.fs.s3a.secret.key" = "s3cr3t-9q"\n')
    p = cdcsync("spark-submit-args", cfg, jvm_free=True)
    assert p.returncode == ExitCode.CONFIG and "[storage]" in p.stderr and "s3cr3t" not in p.stdout + p.stderr


def test_a_service_reserves_its_heap_at_start_unless_the_config_sizes_it():
    from cdcsync.engine.session import service_conf

    assert service_conf({"master": "local[2]"})["spark.driver.extraJavaOptions"] == "-Xms2g -XX:+AlwaysPreTouch"
    got = service_conf({"spark.driver.memory": "6g", "spark.driver.extraJavaOptions": "-Dx=1"})
    assert got["spark.driver.extraJavaOptions"] == "-Xms6g -XX:+AlwaysPreTouch -Dx=1"
    own = {"spark.driver.extraJavaOptions": "-Xms512m"}
    assert service_conf(own) == own
