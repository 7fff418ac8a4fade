#!/usr/bin/env bash
# `make demo`: a local Kafka broker, sample Debezium events, `cdcsync run examples/debezium.toml --once --json`,
# and the resulting Hudi table read back without a JVM. Uses localhost:9092 (a broker already there is reused).
# `make demo-avro` (demo.sh avro): the same events in Debezium's Avro (Confluent wire format) through a local
# schema registry (Apicurio, Confluent API, on localhost:8081), synced with examples/avro-confluent.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
TOPIC=salesdb.salesdb.CUSTOMER
CONFIG=examples/debezium.toml
TABLE=/tmp/cdcsync/lake/customer
BROKER_DIR=.local/demo-kafka
REGISTRY_DIR=.local/demo-registry
REGISTRY=

step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

started=0
if ! $PY -c 'import sys; from devtools.local_kafka import answers_metadata; sys.exit(0 if answers_metadata(9092) else 1)'; then
  step "starting a single-node Kafka broker (KRaft) on localhost:9092"
  $PY -m devtools.local_kafka up --port 9092 --dir "$BROKER_DIR"
  started=1
fi
registry_started=0
cleanup() {
  [ "$registry_started" = 1 ] && $PY -m devtools.local_registry down --dir "$REGISTRY_DIR" || true
  [ "$started" = 1 ] && $PY -m devtools.local_kafka down --dir "$BROKER_DIR" || true
}
trap cleanup EXIT

if [ "${1:-}" = avro ]; then
  REGISTRY=http://127.0.0.1:8081/apis/ccompat/v7
  TABLE=/tmp/cdcsync/lake/customer_avro
  if ! $PY -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/subjects", timeout=2)' "$REGISTRY" 2>/dev/null; then
    step "starting a schema registry (Apicurio Registry, Confluent API) on localhost:8081"
    $PY -m devtools.local_registry up --port 8081 --dir "$REGISTRY_DIR"
    registry_started=1
  fi
  mkdir -p .local
  CONFIG=.local/demo-avro.toml  # examples/avro-confluent.toml, pointed at Apicurio's Confluent API
  sed "s#^schema_registry_url = \"[^\"]*\"#schema_registry_url = \"$REGISTRY\"#" examples/avro-confluent.toml > "$CONFIG"
  step "producing the sample events as Debezium's Avro converter writes them (real Confluent serializer) to $TOPIC"
  $PY -m devtools.demo_events produce --bootstrap localhost:9092 --topic "$TOPIC" --registry "$REGISTRY"
else
  step "producing sample Debezium change events (snapshot, inserts, updates, deletes + tombstones) to $TOPIC"
  $PY -m devtools.demo_events produce --bootstrap localhost:9092 --topic "$TOPIC"
fi
rm -rf "$TABLE" "${TABLE}_dead_letter" "/tmp/cdcsync/checkpoints/$(basename "$TABLE")"

step "cdcsync run $CONFIG --once --json   (summary on stdout, progress on stderr)"
.venv/bin/cdcsync run "$CONFIG" --once --json

step "the Hudi table, read with hudi-rs"
$PY -m devtools.demo_events show "$TABLE"

step "running again: the offsets live in the Hudi commit, so nothing is read twice"
.venv/bin/cdcsync run "$CONFIG" --once --quiet --json \
  | $PY -c 'import json, sys; s = json.load(sys.stdin); print("second run read", s["totals"]["messages"], "messages; resumed from:", s["started_from"])'
