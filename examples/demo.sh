#!/usr/bin/env bash
# `make demo`: a local Kafka broker, sample Debezium events, `cdcsync run examples/debezium.toml --once --json`,
# and the resulting Hudi table read back without a JVM. Uses localhost:9092 (a broker already there is reused).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
TOPIC=salesdb.salesdb.CUSTOMER
CONFIG=examples/debezium.toml
BROKER_DIR=.local/demo-kafka

step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

started=0
if ! $PY -c 'import sys; from devtools.local_kafka import answers_metadata; sys.exit(0 if answers_metadata(9092) else 1)'; then
  step "starting a single-node Kafka broker (KRaft) on localhost:9092"
  $PY -m devtools.local_kafka up --port 9092 --dir "$BROKER_DIR"
  started=1
fi
cleanup() { [ "$started" = 1 ] && $PY -m devtools.local_kafka down --dir "$BROKER_DIR" || true; }
trap cleanup EXIT

step "producing sample Debezium change events (snapshot, inserts, updates, deletes + tombstones) to $TOPIC"
$PY -m devtools.demo_events produce --bootstrap localhost:9092 --topic "$TOPIC"
rm -rf /tmp/cdcsync/lake/customer /tmp/cdcsync/lake/customer_dead_letter /tmp/cdcsync/checkpoints/customer

step "cdcsync run $CONFIG --once --json   (summary on stdout, progress on stderr)"
.venv/bin/cdcsync run "$CONFIG" --once --json

step "the Hudi table, read with hudi-rs"
$PY -m devtools.demo_events show /tmp/cdcsync/lake/customer

step "running again: the offsets live in the Hudi commit, so nothing is read twice"
.venv/bin/cdcsync run "$CONFIG" --once --quiet --json \
  | $PY -c 'import json, sys; s = json.load(sys.stdin); print("second run read", s["totals"]["messages"], "messages; resumed from:", s["started_from"])'
