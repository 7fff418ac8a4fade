"""The project's promises about itself: README tables in step with the code, versions pinned in one place, the
examples valid, `--help` without a JVM, and nothing fetched or generated tracked by git."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.cli import cdcsync

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    """The README text from a `## title` heading up to the next `## ` heading."""
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README + "\n## ", re.S | re.M)
    assert m, f"README has no '## {title}' section"
    return m.group(1)


def _versions() -> dict[str, str]:
    out = {}
    for line in (ROOT / "versions.env").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            k, _, v = line.partition("=")
            out[k.strip()] = v.strip()
    return out


def test_readme_starts_with_the_two_commands():
    head = README[:1500]
    assert "make demo" in head and "make test" in head


def test_exit_code_page_is_the_code_table():
    from cdcsync.exit_codes import MEANING, ExitCode

    rows = re.findall(r"^\| (\d+) \| ([A-Z_]+) \| (.*) \|$", _docs_hooks().exit_codes_page(), re.M)
    assert {(int(c), n, m) for c, n, m in rows} == {(int(e), e.name, MEANING[e]) for e in ExitCode}


def _docs_hooks():
    """docs/hooks.py, which generates the reference pages at `make docs`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_versions_are_pinned_once_and_stated_in_the_readme():
    v = _versions()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert f"pyspark=={v['SPARK_VERSION']}" in project["dependencies"]
    section = _section("Versions")
    for key in ("SPARK_VERSION", "HUDI_VERSION", "HUDI_SPARK_BUNDLE", "KAFKA_VERSION", "SCALA_BINARY", "HADOOP_VERSION",
                "AWS_SDK_VERSION", "APICURIO_VERSION"):
        assert v[key] in section, f"README 'Versions' does not state {key} = {v[key]}"
    assert f"spark-sql-kafka-0-10_{v['SCALA_BINARY']}` {v['SPARK_VERSION']}" in section
    import pyspark  # hadoop-aws must be the Hadoop inside the PySpark wheel

    assert (Path(pyspark.__file__).parent / "jars" / f"hadoop-client-api-{v['HADOOP_VERSION']}.jar").exists()
    pom = (ROOT / "bundles" / "spark" / "pom.xml").read_text()
    assert "${hudi.spark.bundle}" in pom and "spark-sql-kafka-0-10_${scala.binary}" in pom


def test_every_config_key_has_a_meaning_and_every_meaning_a_key():
    from cdcsync.config.reference import KEYS
    from cdcsync.config.schema import CONFIG_SCHEMA

    hooks = _docs_hooks()
    schema = {s: hooks.schema_keys(spec) for s, spec in CONFIG_SCHEMA["properties"].items()}
    assert {s: sorted(k) for s, k in schema.items()} == {s: sorted(k) for s, k in KEYS.items()}
    page = hooks.configuration_page()
    for section, keys in schema.items():
        for key in keys:
            assert f"| `{key}` |" in page, f"{section}.{key} is not in the generated reference"


def test_docs_build_strict_with_every_link_checked(tmp_path):
    # not --quiet: it drops the warnings that --strict counts, and a broken link would pass
    p = subprocess.run([str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "-d",
                        str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "WARNING" not in p.stderr, p.stderr
    assert (tmp_path / "site" / "reference" / "configuration" / "index.html").exists()


EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))


def test_one_example_per_format():
    from cdcsync.config import load_config
    from cdcsync.config.schema import FORMATS

    assert sorted(load_config(p).source.format for p in EXAMPLES) == sorted(FORMATS)


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_is_valid_through_the_cli(example):
    p = cdcsync("validate", example, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "valid" in p.stdout + p.stderr


def test_help_lists_every_command_without_pyspark():
    p = cdcsync("--help", timeout=30, jvm_free=True)
    assert p.returncode == 0, p.stderr
    for command in ("run", "validate", "probe", "probe-brokers", "infer-schema", "replay-from-offset", "dead-letter",
                    "decrypt"):
        assert re.search(rf"│ {re.escape(command)}\s", p.stdout), f"--help does not list {command}:\n{p.stdout}"


def test_shell_completion_completes_commands_and_options_without_pyspark():
    # typer detects the calling shell from the process tree (make's sh here); its switch lets the test name one
    script = cdcsync("--show-completion", "bash", env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"},
                     timeout=30, jvm_free=True)
    assert script.returncode == 0 and "_CDCSYNC_COMPLETE=complete_bash" in script.stdout, script.stderr
    for words, cword, want in (("cdcsync st", 1, "status"), ("cdcsync run --metrics-p", 2, "--metrics-port")):
        p = cdcsync(env={"_CDCSYNC_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)},
                    timeout=30, jvm_free=True)
        assert p.returncode == 0 and p.stdout.split() == [want], (words, p.stdout, p.stderr)


def test_nothing_fetched_or_generated_is_tracked():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    bad = [f for f in files if f.endswith((".jar", ".parquet", ".log")) or "/.hoodie/" in f or f.startswith(
        (".venv/", ".local/", "bundles/spark/jars/", "bundles/kafka/jars/"))]
    assert files and not bad, bad
    ignored = (ROOT / ".gitignore").read_text()
    for pattern in ("bundles/*/jars/", ".venv/", ".local/"):
        assert pattern in ignored
