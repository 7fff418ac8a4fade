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
    from cdcsync.runtime.session import service_conf

    assert service_conf({"master": "local[2]"})["spark.driver.extraJavaOptions"] == "-Xms2g -XX:+AlwaysPreTouch"
    got = service_conf({"spark.driver.memory": "6g", "spark.driver.extraJavaOptions": "-Dx=1"})
    assert got["spark.driver.extraJavaOptions"] == "-Xms6g -XX:+AlwaysPreTouch -Dx=1"
    own = {"spark.driver.extraJavaOptions": "-Xms512m"}
    assert service_conf(own) == own


def test_an_embedded_metastore_keeps_its_java_option_beside_a_service_s_and_the_user_s(tmp_path):
    from dataclasses import replace

    from cdcsync.config import load_config
    from cdcsync.runtime.session import config_conf, service_conf

    cfg = load_config(write(tmp_path, minimal() + f'\n[spark]\n"spark.driver.extraJavaOptions" = "-Duser=1"\n\n'
                                                  f'[catalog]\ndatabase = "db"\nmetastore_dir = "{tmp_path}/ms"\n'))
    opts = config_conf(replace(cfg, spark=service_conf(cfg.spark)))["spark.driver.extraJavaOptions"].split()
    assert {f"-Dderby.system.home={tmp_path}/ms", "-Duser=1", "-Xms2g", "-XX:+AlwaysPreTouch"} <= set(opts)
