# cdcsync: every set-up step a fresh machine needs. Versions: versions.env.
include versions.env

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
KAFKA_PORT ?= 9092
REGISTRY_PORT ?= 8081

BENCH_SIZE ?= smoke
BENCH_ARGS ?=
AB_ARGS ?=
CRON_ARGS ?=

.PHONY: help setup prereqs bundles jars-lock kafka-up kafka-down registry-up registry-down test test-prereqs soak test-unit test-integration conformance demo demo-avro bench bench-ab bench-cron bench-cron-profile bench-parse ab-args lint docs clean

help:
	@echo "make demo   - start a local broker, produce sample Debezium events, sync them into a Hudi table, show it"
	@echo "make test   - install everything, fetch bundles, run the unit and integration tests"
	@echo "make demo-avro - the same, in Debezium's Avro (Confluent wire format) through a local schema registry"
	@echo "make soak   - the long runs make test leaves out (back-to-back, killed and restarted processes, 50 replayed ranges, clusters)"
	@echo "make conformance - the same checks against the real CDC corpus (CDCSYNC_FIXTURES, else ../shared/fixtures/cdc)"
	@echo "make bench  - one Debezium workload through cdcsync, the hand-written peer (Hudi's defaults, and tuned as cdcsync), the bound and the Parquet floor, in interleaved rounds, then 100 routed tables serial vs parallel (BENCH_SIZE=tiny|smoke|full)"
	@echo "make bench-ab AB_ARGS='--option KEY=VALUE' - cdcsync without and with [sink.options] entries on one multi-batch workload, interleaved (python -m bench.ab --help)"
	@echo "make bench-cron CRON_ARGS=... - the cron shape: cdcsync run --once over each 1,000 new events vs the peer job, median of 5 (python -m bench.cron --help)"
	@echo "make bench-cron-profile - two profiled cron rounds: each job's Spark jobs (bench.timeline) and Python side (py-spy, bench.pyspy)"
	@echo "make bench-parse - what parsing a Debezium message costs, cdcsync's way against the peer's, in memory (bench/parse.py)"
	@echo "make docs   - build docs/ as a site (.local/site), failing on any broken link"
	@echo "make jars-lock - after a change to bundles/spark/pom.xml: rewrite cdcsync/jars.lock (what 'cdcsync jars fetch' downloads)"
	@echo "make setup | bundles | kafka-up | kafka-down | registry-up | registry-down | lint | clean"

prereqs:
	@command -v java >/dev/null || { echo "error: Java 17 is required (Debian: apt-get install openjdk-17-jdk-headless)"; exit 1; }
	@java -version 2>&1 | head -1 | grep -Eq '"(17|21)[."]' || { echo "error: Java 17 is required, found: $$(java -version 2>&1 | head -1)"; exit 1; }
	@command -v mvn >/dev/null || { echo "error: Maven is required to fetch the jars (Debian: apt-get install maven)"; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "error: Python >= 3.11 is required (found $$($(PYTHON) --version))"; exit 1; }

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev]'
	@touch $@

setup: prereqs $(VENV)/.installed bundles

bundles: prereqs
	@bash bundles/fetch.sh

# the manifest an installed cdcsync fetches by: bundles/spark/pom.xml's resolution, with Maven Central's SHA-1s
jars-lock: $(VENV)/.installed bundles
	$(PY) -m devtools.jars_lock

kafka-up: setup
	$(PY) -m devtools.local_kafka up --port $(KAFKA_PORT)

registry-up: setup
	$(PY) -m devtools.local_registry up --port $(REGISTRY_PORT)

registry-down:
	@test -x $(PY) && $(PY) -m devtools.local_registry down || true

kafka-down:
	@test -x $(PY) && $(PY) -m devtools.local_kafka down || true

# promtool checks the example alert rules and dashboard queries (tests/unit/test_monitoring_examples.py)
test-prereqs:
	@command -v promtool >/dev/null || { echo "error: promtool is required by the tests (Debian: apt-get install --no-install-recommends prometheus)"; exit 1; }

test: setup test-prereqs
	$(VENV)/bin/pytest -q -n 2 --dist loadfile --durations=20 -m "not soak" tests/unit tests/integration

# the long runs that prove the README's claims (outages, clusters, killed and restarted processes, 50 replayed ranges,
# back-to-back cron runs, the rate limit): minutes each, so apart from make test; .ci/run runs them after it
soak: setup test-prereqs
	$(VENV)/bin/pytest -q -n 2 --dist loadfile --durations=15 -m soak tests/integration

test-unit: setup test-prereqs
	$(VENV)/bin/pytest -q tests/unit

test-integration: setup
	$(VENV)/bin/pytest -q -m integration tests/unit tests/integration

# real Debezium, Canal and Maxwell messages kept outside the repository; fails without them
conformance: setup
	$(VENV)/bin/pytest -q tests/conformance

demo: setup
	bash examples/demo.sh

# the same events in Debezium's Avro through a local schema registry (Apicurio, Confluent API)
demo-avro: setup
	bash examples/demo.sh avro

$(VENV)/.bench: pyproject.toml $(VENV)/.installed
	$(PIP) install -q -e '.[dev,bench]'
	@touch $@

bench: setup $(VENV)/.bench
	$(PY) -m bench.run --size $(BENCH_SIZE) $(BENCH_ARGS)

# an A/B of [sink.options] (bench/ab.py), e.g. AB_ARGS="--option hoodie.embed.timeline.server=true --rounds 5"
bench-ab: ab-args setup $(VENV)/.bench
	$(PY) -m bench.ab $(AB_ARGS)

# the cron shape: run --once over each 1,000 new events against the peer job (bench/cron.py), e.g. CRON_ARGS="--rounds 5"
bench-cron: setup $(VENV)/.bench
	$(PY) -m bench.cron $(CRON_ARGS)

# where a cron run's time goes: both jobs' Spark jobs (event logs) and cdcsync's Python side (py-spy), two rounds
bench-cron-profile: setup $(VENV)/.bench
	rm -rf .local/cron-profile
	$(PY) -m bench.cron --rounds 2 --py-spy .local/cron-profile/py-spy --event-log .local/cron-profile/event-log $(CRON_ARGS)
	$(PY) -m bench.pyspy .local/cron-profile/py-spy/cdcsync-*.txt
	$(PY) -m bench.pyspy .local/cron-profile/py-spy/peer-tuned-*.txt --match bench/peer.py --match cdcsync/ --lines --top 12
	$(PY) -m bench.timeline --jobs .local/cron-profile/event-log/local-*

# what parsing a Debezium message costs, cdcsync's way against the peer's, in memory (bench/parse.py), e.g. PARSE_ARGS="--rounds 5"
bench-parse: setup $(VENV)/.bench
	$(PY) -m bench.parse $(PARSE_ARGS)

ab-args:
	@test -n "$(AB_ARGS)" || { echo "error: give the option to compare: make bench-ab AB_ARGS='--option KEY=VALUE ...'"; exit 2; }

# ruff, then mypy: the type checker over cdcsync/ as [tool.mypy] in pyproject.toml says (stubs: the dev extras)
lint: setup
	$(VENV)/bin/ruff check cdcsync tests devtools bench docs
	$(VENV)/bin/mypy cdcsync

# docs/ as a site in .local/site; strict: a warning (a broken link or anchor) fails it. Needs no jars.
docs: prereqs $(VENV)/.installed
	$(VENV)/bin/mkdocs build --strict

clean:
	rm -rf .local build *.egg-info .pytest_cache
