"""Issue 48, point 1: cdcsync installed as a tool. The wheel built as a user would, installed into a fresh virtual
environment outside the repository, fetches its jars (from Maven's local repository, a Maven-2 mirror that keeps the
test off the network) into the user cache, and syncs the Debezium example's kind of topic with no clone and no
CDCSYNC_JARS_DIR; a damaged cached jar is then found and fetched again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.integration.engine.helpers import _toml, by_key, expected_state, hudi_rs_rows, produce_fixture

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = "debezium-1.9-mysql-schema.txt"


def _run(cmd: list, cwd: Path, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{cmd}: {p.stderr[-3000:]}"
    return p


def _config(tmp_path: Path, bootstrap: str, topic: str) -> Path:
    """examples/debezium.toml with this test's broker, topic and folders, keyed as the fixture's table is."""
    cfg = tomllib.loads((ROOT / "examples" / "debezium.toml").read_text())
    cfg["source"] |= {"bootstrap_servers": bootstrap, "topics": [topic], "group_id": f"install-{topic}"}
    cfg["sink"] |= {"path": str(tmp_path / "table"), "primary_key": ["id"]}
    cfg["sink"].pop("partition_by")  # the example's MKTSEGMENT is the demo table's column, not the fixture's
    cfg["run"]["checkpoint_dir"] = str(tmp_path / "ckpt")
    lines = []
    for section, values in cfg.items():
        lines.append(f"[{section}]")
        lines += [f"{json.dumps(k) if '.' in k else k} = {_toml(v)}" for k, v in values.items()]
    path = tmp_path / "debezium.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.soak  # a wheel built and installed in a fresh venv, its jars fetched, a run
def test_the_installed_wheel_fetches_its_jars_and_syncs(bootstrap, make_topic, produce, tmp_path):
    work = tmp_path / "outside"  # pytest's tmp_path: outside the repository
    work.mkdir()
    assert ROOT not in work.resolve().parents
    env = {k: v for k, v in os.environ.items() if k not in ("CDCSYNC_JARS_DIR", "VIRTUAL_ENV", "PYTHONPATH")}
    _run([sys.executable, "-m", "build", "--outdir", tmp_path / "dist", ROOT], work, env)
    wheel = next((tmp_path / "dist").glob("cdcsync-*.whl"))
    _run([sys.executable, "-m", "venv", tmp_path / "venv"], work, env)
    _run([tmp_path / "venv" / "bin" / "pip", "install", "-q", "--no-compile", wheel], work, env,
         timeout=600)  # pip's cache makes it local; no .pyc of pyspark's thousands of files

    cdcsync = tmp_path / "venv" / "bin" / "cdcsync"
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    mirror = ["jars", "fetch", "--repository", (Path.home() / ".m2" / "repository").as_uri()]
    first = json.loads(_run([cdcsync, *mirror, "--json"], work, env).stdout)
    cache = Path(first["dir"])
    assert cache.parent == tmp_path / "xdg" / "cdcsync" / "jars" and set(first["jars"].values()) == {"downloaded"}
    assert (tmp_path / "venv" / "lib").resolve() in Path(_run([cdcsync.with_name("python"), "-c",
                                                               "import cdcsync; print(cdcsync.__file__)"],
                                                              work, env).stdout.strip()).resolve().parents
    second = _run([cdcsync, *mirror], work, env)
    assert "nothing downloaded" in second.stderr and "fetching" not in second.stderr
    version = _run([cdcsync, "--version"], work, env).stdout
    assert f"jars: {cache} (user cache, complete)" in version, version

    topic = make_topic()
    n = produce_fixture(produce, topic, FIXTURE)
    config = _config(tmp_path, bootstrap, topic)
    summary = json.loads(_run([cdcsync, "run", config, "--once", "--json"], work, env, timeout=600).stdout)
    assert summary["totals"]["messages"] == n and summary["totals"]["bad"] == 0
    assert by_key(hudi_rs_rows(str(tmp_path / "table")), ["id"]) == expected_state(FIXTURE, ["id"])

    damaged = next(cache.glob("kafka-clients-*.jar"))
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    again = json.loads(_run([cdcsync, *mirror, "--json"], work, env).stdout)
    assert {k: v for k, v in again["jars"].items() if v != "present"} == {damaged.name: "replaced"}
