"""The metric names a PromQL expression reads, and those a Prometheus text exposition offers: the monitoring
examples (examples/grafana, examples/prometheus) may use only names `run` exposes."""

from __future__ import annotations

import re

EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples"
DASHBOARD = EXAMPLES / "grafana" / "cdcsync.json"
RULES = EXAMPLES / "prometheus" / "cdcsync-rules.yml"

# identifiers PromQL reserves; functions and aggregations are told apart by the "(" that follows them
_KEYWORDS = {"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan"}
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')
_GRAFANA_VARIABLE = re.compile(r"\$\{[^}]*\}|\$\w+")
_LABEL_LIST = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_TOKEN = re.compile(r"(\d[\w.]*)|([A-Za-z_:][\w:]*)(\s*\()?")
_LABEL_VALUES = re.compile(r"\s*label_values\((.*),\s*\w+\s*\)\s*", re.S)
_SUFFIXES = {"counter": ("_total", "_created"), "gauge": ("",),
             "histogram": ("_bucket", "_sum", "_count", "_created"), "summary": ("", "_sum", "_count", "_created")}


def metric_names(expr: str) -> set[str]:
    """The metric names in a PromQL expression (Grafana's variables allowed, label_values(…) too): identifiers
    that are not labels (inside {…}, by/on/… lists), durations, numbers, keywords, or functions."""
    if m := _LABEL_VALUES.fullmatch(expr):  # Grafana's variable query: its second argument is a label
        expr = m.group(1)
    expr = _STRING.sub('""', expr)
    expr = _GRAFANA_VARIABLE.sub("", expr)
    expr = re.sub(r"\{[^}]*\}", "", expr)  # label matchers, strings already gone
    expr = re.sub(r"\[[^\]]*\]", "", expr)  # ranges and subqueries
    expr = _LABEL_LIST.sub(" ", expr)
    names = set()
    for _number, ident, call in _TOKEN.findall(expr):
        if ident and not call and ident.lower() not in _KEYWORDS:
            names.add(ident)
    return names


def exposed_names(text: str) -> set[str]:
    """Every series name a Prometheus text exposition offers: its samples' names, and those of the families it
    declares (# TYPE) that have no sample yet, e.g. a labelled counter nothing has counted."""
    from prometheus_client.parser import text_string_to_metric_families

    names = set()
    for fam in text_string_to_metric_families(text):
        names |= {s.name for s in fam.samples}
        names |= {fam.name + suffix for suffix in _SUFFIXES.get(fam.type, ("",))}
    return names


def dashboard_queries() -> dict[str, str]:
    """{where: PromQL} of every panel target and query variable of the Grafana dashboard."""
    import json

    dash = json.loads(DASHBOARD.read_text())
    out = {f"variable {v['name']}": v["query"] for v in dash["templating"]["list"] if v["type"] == "query"}
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            out[f"panel {panel['title']!r} {target['refId']}"] = target["expr"]
    return out


def rule_queries() -> dict[str, str]:
    """{where: PromQL} of every rule of the Prometheus rules file."""
    import yaml

    groups = yaml.safe_load(RULES.read_text())["groups"]
    return {f"{g['name']}/{r.get('alert') or r.get('record')}": r["expr"] for g in groups for r in g["rules"]}
