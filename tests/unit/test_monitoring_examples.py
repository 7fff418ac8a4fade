"""The monitoring examples (issue 48): the Grafana dashboard and the Prometheus rules are well-formed, promtool
accepts the rules and every dashboard query, and the name extractor the integration check relies on reads PromQL
right. tests/integration/cli/test_monitoring_examples.py checks the names against a real run's /metrics."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests import promql

PROMTOOL_MISSING = ("promtool is not installed: it checks examples/prometheus/cdcsync-rules.yml. Debian/Ubuntu: "
                    "apt-get install --no-install-recommends prometheus (or put promtool from a Prometheus release "
                    "tarball on PATH)")


@pytest.mark.parametrize(("expr", "names"), [
    ('sum by (class) (rate(cdcsync_records_total{instance=~"$instance", class="bad"}[$__rate_interval]))',
     {"cdcsync_records_total"}),
    ("histogram_quantile(0.95, sum by (le) (rate(a_bucket[5m])))", {"a_bucket"}),
    ("time() - max_over_time(beat[6h:1m] offset 5m) > 1e3 unless on (instance) other", {"beat", "other"}),
    ("a / on (x) group_left (y) b * 60 and bool c > Inf", {"a", "b", "c"}),
    ("sum(x) without (le) or vector(0)", {"x"}),
    ('label_values(cdcsync_freshness_seconds{instance=~"$instance"}, table)', {"cdcsync_freshness_seconds"}),
    ('count(m{l="sum(no) and by"}) by (l)', {"m"}),
])
def test_the_extractor_finds_metric_names_and_nothing_else(expr, names):
    assert promql.metric_names(expr) == names


def test_the_dashboard_has_a_prometheus_datasource_variable_every_panel_uses():
    dash = json.loads(promql.DASHBOARD.read_text())
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    for panel in dash["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
            assert panel["targets"] and panel["description"], panel["title"]
            assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"]), panel["title"]
    assert len({p["id"] for p in dash["panels"]}) == len(dash["panels"])


def test_every_query_reads_cdcsync_metrics_only():
    for where, expr in {**promql.dashboard_queries(), **promql.rule_queries()}.items():
        names = promql.metric_names(expr)
        assert names and all(n.startswith("cdcsync_") for n in names), f"{where}: {sorted(names)} in {expr}"


def _promtool() -> str:
    path = shutil.which("promtool")
    if not path:
        pytest.fail(PROMTOOL_MISSING)
    return path


def test_promtool_accepts_the_rules_file():
    p = subprocess.run([_promtool(), "check", "rules", str(promql.RULES)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_promtool_parses_every_dashboard_query(tmp_path):
    # promtool has no query checker: each query, its Grafana variables given values, becomes a recording rule
    concrete = {"$__rate_interval": "5m", "${datasource}": "", "$instance": ".*", "$table": ".*"}
    rules = []
    for i, (where, expr) in enumerate(promql.dashboard_queries().items()):
        if where.startswith("variable"):
            continue
        for var, value in concrete.items():
            expr = expr.replace(var, value)
        rules.append({"record": f"dashboard:query_{i}", "expr": expr})
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(json.dumps({"groups": [{"name": "dashboard", "rules": rules}]}))  # JSON is YAML
    p = subprocess.run([_promtool(), "check", "rules", str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
