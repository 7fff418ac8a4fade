"""The options a Hudi write carries for where it runs: one JVM (a local master) goes without the embedded timeline
server and with direct markers, a cluster keeps Hudi's defaults, and [sink.options] win either way."""

from __future__ import annotations

from cdcsync.sinks.hudi import SAME_JVM, TableSpec, options_for, write_options


def spec(**options) -> TableSpec:
    return TableSpec(path="/t", table_name="t", table_type="MERGE_ON_READ", primary_key=["id"], partition_by=[],
                     ordering_fields=["_cdc_order"], options=options)


def test_a_local_session_writes_without_the_embedded_timeline_server():
    for master in ("local", "local[2]", "local[*]"):
        got = options_for(spec(), master)
        assert got["hoodie.embed.timeline.server"] == "false" and got["hoodie.write.markers.type"] == "DIRECT"
        assert got == write_options(spec()) | SAME_JVM


def test_a_cluster_keeps_hudis_defaults_and_the_config_wins():
    assert options_for(spec(), "spark://master:7077") == write_options(spec())
    assert not set(SAME_JVM) & set(write_options(spec()))
    own = spec(**{"hoodie.embed.timeline.server": "true"})
    got = options_for(own, "local[2]")
    assert got["hoodie.embed.timeline.server"] == "true" and got["hoodie.write.markers.type"] == "DIRECT"
