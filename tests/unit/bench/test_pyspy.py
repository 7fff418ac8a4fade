"""bench.pyspy: py-spy's collapsed stacks read as inclusive wall time per function."""

from bench.pyspy import inclusive

_MAIN = "<module> (cdcsync/__main__.py:5)"
STACKS = "\n".join([
    f"{_MAIN};run (cdcsync/engine/runner.py:287);decode (cdcsync/engine/batch.py:50);load (pyspark/sql/x.py:314) 30",
    f"{_MAIN};run (cdcsync/engine/runner.py:287);run (cdcsync/engine/runner.py:290) 10",
    f"{_MAIN};run (cdcsync/engine/runner.py:300);send_command (py4j/java_gateway.py:1038) 5",
    "idle_thread (threading.py:320) 55",
])


def test_a_function_counts_each_stack_once_and_the_total_counts_every_sample():
    found, total = inclusive(STACKS, ["cdcsync/"])
    assert total == 100
    assert found["cdcsync/engine/runner.py:run"] == 45  # recursion in one stack counts once
    assert found["cdcsync/engine/batch.py:decode"] == 30
    assert found["cdcsync/__main__.py:<module>"] == 45
    assert not any("pyspark" in k or "threading" in k for k in found)


def test_lines_split_a_function_by_the_line_it_was_in_and_several_matches_count():
    found, _ = inclusive(STACKS, ["engine/runner.py", "py4j/"], lines=True)
    assert found["cdcsync/engine/runner.py:run:287"] == 40
    assert found["cdcsync/engine/runner.py:run:300"] == 5
    assert found["py4j/java_gateway.py:send_command:1038"] == 5
