#!/usr/bin/env bash
# Fetches the JVM parts cdcsync needs into bundles/spark/jars and bundles/kafka/jars (gitignored).
# Idempotent: when a folder's stamp matches versions.env and every jar it lists is present, Maven is not run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck disable=SC1091
source "$here/../versions.env"

fetch() {  # $1 = folder, rest = -D properties
  local name="$1"; local dir="$here/$1"; shift
  local want; want="$* pom:$(sha1sum "$dir/pom.xml" | cut -c1-12)"  # a changed pom fetches again
  local stamp="$dir/jars/.stamp"
  if [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "$want" ]; then
    local missing=0
    while read -r jar; do [ -f "$dir/jars/$jar" ] || missing=1; done < <(tail -n +2 "$stamp")
    if [ "$missing" = 0 ]; then
      echo "bundles/$name: up to date ($(($(wc -l < "$stamp") - 1)) jars, nothing fetched)"
      return 0
    fi
  fi
  command -v mvn >/dev/null || { echo "error: Maven (mvn) is not installed; install it (Debian: apt-get install maven) and run 'make bundles' again" >&2; exit 1; }
  rm -rf "$dir/jars"
  echo "bundles/$name: resolving with Maven ($want)"
  local log; log="$(mktemp)"
  if ! mvn -B -f "$dir/pom.xml" package "$@" >"$log" 2>&1; then
    if grep -qiE "Could not transfer|UnknownHost|Connection refused|timed out|Network is unreachable|No route" "$log"; then
      echo "error: bundles/$name: Maven Central could not be reached. Check the network or a proxy in ~/.m2/settings.xml, then run 'make bundles' again." >&2
    elif grep -qiE "Could not (find|resolve) artifact|was not found" "$log"; then
      echo "error: bundles/$name: an artifact does not exist on Maven Central: check the versions in versions.env" >&2
    else
      echo "error: bundles/$name: Maven failed" >&2
    fi
    grep -E "ERROR" "$log" | head -5 >&2
    rm -f "$log"; exit 1
  fi
  rm -f "$log"
  { echo "$want"; (cd "$dir/jars" && ls -1 *.jar); } > "$stamp"
  echo "bundles/$name: fetched $(($(wc -l < "$stamp") - 1)) jars:"
  (cd "$dir/jars" && ls -1 *.jar | sed 's/^/  /')
}

fetch spark -Dhudi.spark.bundle="$HUDI_SPARK_BUNDLE" -Dhudi.version="$HUDI_VERSION" \
  -Dspark.version="$SPARK_VERSION" -Dscala.binary="$SCALA_BINARY" \
  -Dhadoop.version="$HADOOP_VERSION" -Daws.sdk.version="$AWS_SDK_VERSION"
fetch kafka -Dkafka.version="$KAFKA_VERSION"

# Apicurio Registry (the Confluent-compatible registry of the Avro tests and demo): its ready-built app, unzipped.
# maven-dependency-plugin 2.8: 3.x needs the artifact's parent POM, which Maven Central does not serve.
fetch_registry() {
  local dir="$here/registry" want="apicurio-registry-app:$APICURIO_VERSION"
  local jar="$dir/app/apicurio-registry-app-$APICURIO_VERSION-runner.jar"
  if [ -f "$dir/app/.stamp" ] && [ "$(cat "$dir/app/.stamp")" = "$want" ] && [ -f "$jar" ]; then
    echo "bundles/registry: up to date (Apicurio Registry $APICURIO_VERSION, nothing fetched)"
    return 0
  fi
  command -v unzip >/dev/null || { echo "error: unzip is not installed (Debian: apt-get install unzip)" >&2; exit 1; }
  echo "bundles/registry: fetching Apicurio Registry $APICURIO_VERSION"
  rm -rf "$dir/app" && mkdir -p "$dir/app"
  if ! mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:2.8:get -Dtransitive=false \
      -Dartifact="io.apicurio:apicurio-registry-app:$APICURIO_VERSION:zip:all" -Ddest="$dir/app/app.zip" \
      >/dev/null 2>&1; then
    echo "error: bundles/registry: io.apicurio:apicurio-registry-app:$APICURIO_VERSION:zip:all could not be fetched" >&2
    exit 1
  fi
  unzip -q "$dir/app/app.zip" -d "$dir/app" && rm "$dir/app/app.zip"
  echo "$want" > "$dir/app/.stamp"
}
fetch_registry
