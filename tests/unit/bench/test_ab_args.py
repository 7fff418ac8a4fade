"""bench.ab --base-ref: the base variant's cdcsync runs from another source tree, on this clone's jars."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

from bench import ab, measure
from bench.contenders import Source


def test_the_base_variant_runs_in_its_source_tree_on_this_clones_jars(monkeypatch, tmp_path):
    calls = []

    def fake(what, cmd, env=None, cwd=None):
        calls.append((cmd, env, cwd))
        return SimpleNamespace(stdout=json.dumps({"totals": {"messages": 3}, "batches": 1}), seconds=1.0, cpu_s=1.0,
                               peak_rss_mb=1.0, lingered=False, returncode=0)

    monkeypatch.setattr(ab, "measured", fake)
    monkeypatch.setattr(ab, "table_checksum", lambda path: (1, 2))
    monkeypatch.setattr(ab.measure, "compactions", lambda path: 0)
    src = Source("localhost:9092", "t", (1, 2), {})
    ab.run_one(tmp_path, src, "MERGE_ON_READ", 10, "base", {}, tmp_path / "base-code")
    ab.run_one(tmp_path, src, "MERGE_ON_READ", 10, "option", {})
    (cmd, env, cwd), (cmd2, env2, cwd2) = calls
    assert cmd[1:3] == ["-m", "cdcsync"] and cmd == cmd2
    assert cwd == tmp_path / "base-code" and env == {"CDCSYNC_JARS_DIR": str(ab.run.ROOT / "bundles/spark/jars")}
    assert cwd2 == ab.run.ROOT and env2 is None


def test_python_m_runs_the_package_of_the_working_directory(tmp_path):
    fake = tmp_path / "cdcsync"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text("print('the other tree')\n")
    m = measure.run([sys.executable, "-m", "cdcsync"], cwd=tmp_path)
    assert m.returncode == 0 and m.stdout.strip() == "the other tree"
