"""The one table of exit codes against the tests that prove each: every code cdcsync can exit with has a test that
makes a real process end with it, or, where that costs a run of its own, raises the error carrying it through the
real path (79, 80: cli/app.py turns every CdcsyncError into its code) or makes the probe's real classification."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from cdcsync.exit_codes import ExitCode

TESTS = Path(__file__).resolve().parents[1]

# code -> "file::test" (the first test named is the one that shows the code through the command where there is one)
PROVEN_BY = {
    ExitCode.OK: "integration/cli/test_exit_codes.py::test_0_version",
    ExitCode.WARNINGS: "integration/probe/test_probe.py::test_a_dead_entry_among_working_bootstrap_servers_is_a_"
                       "warning_exit_1",
    ExitCode.USAGE: "integration/cli/test_exit_codes.py::test_2_usage_names_the_missing_argument",
    ExitCode.BAD_RECORD: "integration/cli/test_run_exit_codes.py::test_bad_record_with_fail_policy_exits_65_naming_"
                         "the_offset",
    ExitCode.TOPIC_MISSING: "integration/cli/test_run_exit_codes.py::test_missing_topic_exits_66",
    ExitCode.DNS: "integration/probe/test_probe.py::test_unresolvable_bootstrap_exits_68_within_timeout",
    ExitCode.UNREACHABLE: "integration/cli/test_run_exit_codes.py::test_unreachable_broker_exits_69_before_spark",
    ExitCode.INTERNAL: "integration/cli/test_exit_codes.py::test_70_missing_jars_is_an_internal_error_with_the_fix",
    ExitCode.SINK_WRITE: "integration/cli/test_exit_codes.py::test_74_hudi_write_failure_through_the_command",
    ExitCode.LEADER_UNAVAILABLE: "unit/probe/test_probe_classify.py::test_leaderless_partition_fails_with_75_naming_"
                                 "offline_brokers",
    ExitCode.TLS: "integration/probe/test_probe.py::test_ssl_with_a_wrong_ca_exits_76_naming_certificate_verification",
    ExitCode.AUTH: "integration/probe/test_probe.py::test_sasl_wrong_password_exits_77_naming_sasl_authentication",
    ExitCode.CONFIG: "integration/cli/test_exit_codes.py::test_78_config_names_file_and_key",
    ExitCode.SCHEMA_INCOMPATIBLE: "integration/engine/test_schema_evolution.py::test_incompatible_change_fails_before_"
                                  "committing",
    ExitCode.LEDGER_MISMATCH: "integration/engine/test_batch_ledger.py::test_expected_message_counts_are_checked_"
                              "before_the_commit",
    ExitCode.CONCURRENT_WRITER: "integration/cli/test_dead_letter_cli.py::test_list_show_replay",
    ExitCode.DATA_LOSS: "integration/engine/test_data_loss.py::test_offsets_deleted_below_the_table_stop_the_run_"
                        "with_82_naming_the_range",
    ExitCode.TABLE_ISOLATED: "integration/engine/test_routing_isolation.py::test_a_table_with_broken_storage_is_set_"
                             "aside_exit_83_then_caught_up_after_repair",
    ExitCode.INTERRUPTED: "integration/cli/test_exit_codes.py::test_130_a_second_signal_aborts",
}


def _tests(path: Path) -> dict[str, str]:
    """Each test function of `path` and its source."""
    text = path.read_text()
    return {n.name: ast.get_source_segment(text, n) for n in ast.walk(ast.parse(text))
            if isinstance(n, ast.FunctionDef)}


def test_every_exit_code_has_a_test_that_exists():
    assert set(PROVEN_BY) == set(ExitCode), f"codes without a test: {set(ExitCode) - set(PROVEN_BY)}"
    missing = []
    for code, ref in PROVEN_BY.items():
        file, _, name = ref.partition("::")
        path = TESTS / file
        body = _tests(path).get(name) if path.is_file() else None
        if body is None:
            missing.append(f"{int(code)}: {ref}")
        elif not re.search(rf"\b{int(code)}\b|ExitCode\.{code.name}\b", body):
            missing.append(f"{int(code)}: {ref} never names the code")
    assert not missing, "exit-code tests that do not exist: " + "; ".join(missing)
