"""What each config key means: the text of the configuration reference that docs/hooks.py generates from
the JSON Schema (cdcsync/config/schema.py) and this table, so the two cannot drift: every schema key has an entry
here and every entry is a schema key (tests/unit/test_project_files.py). Cells are Markdown, links relative to
docs/."""

from __future__ import annotations

# section -> key -> (default, meaning)
KEYS: dict[str, dict[str, tuple[str, str]]] = {
    'source': {
        'bootstrap_servers': ('required', '`host:port[,host:port…]`'),
        'topics': ('—', 'list of topics; exactly one of `topics` / `topic_pattern`'),
        'topic_pattern': ('—', 'a regular expression over topic names; topics that appear while a continuous run goes '
                               'on are picked up from their beginning'),
        'format': ('required', '`debezium-json`, `canal-json`, `maxwell-json`, `json`, `csv`, `raw`, `avro`, '
                               '`avro-confluent`'),
        'group_id': ('none', 'Kafka consumer group committed after each Hudi commit (monitoring only; resume offsets '
                             'live in Hudi) and read by `startup_mode = "group-offsets"`'),
        'startup_mode': ('`group-offsets`', '`earliest-offset`, `latest-offset`, `group-offsets`, `timestamp`, '
                                            '`specific-offsets` (see [Exactly once](exactly-once.md))'),
        'startup_timestamp_ms': ('—', 'epoch milliseconds, required by `timestamp`'),
        'specific_offsets': ('—', '`partition:0,offset:42;partition:1,offset:300`, required by `specific-offsets`'),
        'metadata_columns': ('`["topic","partition","offset","timestamp"]`',
            'Kafka fields kept as columns `_kafka_<name>`: any of `topic`, `partition`, `offset`, `timestamp`, '
            '`timestamp-type`, `headers`, `key`'),
        'header_filter': ('none', "Flink's grammar, e.g. `depart:toy\\|depart:book&!env:test`: `key:value` terms "
                                  'joined by `&` and `\\|`, negated by `!`, evaluated strictly left to right, no '
                                  'parentheses, values compared as UTF-8 text; records that do not match are skipped '
                                  'and counted'),
        'max_message_bytes': ('none', 'a larger value is a bad record (`oversized`)'),
        'csv_columns': ('—', 'column names by position, for `format = "csv"`'),
        'csv_field_delimiter': ('`,`', 'one character, for `format = "csv"`; not `"` (the quote character) nor a line '
                                       'break. Quoting follows RFC 4180'),
        'key_format': ('`json`', 'how the Kafka key is read, with any `format`: `json` (text), `avro` (plain Avro, '
                                 '`key_avro_schema_file`), `avro-confluent` (the wire format, `schema_registry_url`); '
                                 "Flink's `key.format`"),
        'key_fields': ('—', "columns read from the key into every row that lacks them (Flink's `key.fields`); with "
                            '`json`, `csv`, `raw` and the Avro formats; without `sink.primary_key` they are the '
                            'primary key'),
        'avro_schema_file': ('—', 'required by `format = "avro"`: the values\' writer schema (`.avsc` JSON); a '
                                  "relative path starts at the config file's folder"),
        'key_avro_schema_file': ('—', 'required by `key_format = "avro"`: the keys\' writer schema (`.avsc`)'),
        'schema_registry_url': ('—', "required by `avro-confluent`: the Confluent-compatible registry's base URL "
                                     '(Confluent, Karapace: `http://host:8081`; Apicurio: '
                                     '`http://host:8080/apis/ccompat/v7`)'),
        'schema_registry_user_info': ('—', "`user:password` for the registry's basic auth, e.g. "
                                           '`"${REGISTRY_USER_INFO}"`; never printed'),
        'schema_registry_ca_file': ('system CAs',
            "a PEM file of the CA that signed an `https://` registry's certificate"),
        'unavailable_value_placeholder': ('`__debezium_unavailable_value`',
            "Debezium's `unavailable.value.placeholder`: a value equal to it (its UTF-8 bytes in a binary column, "
            '`["…"]` in an array) means "unchanged" (PostgreSQL TOAST): the row keeps the value the table holds (see '
            '[Real-world streams](real-world-streams.md)); Debezium formats only'),
        'tombstones': ('`skip` for envelope formats; `delete` for `json`, `csv` and Avro rows with a key',
            '`delete`: a keyed record with a null value deletes its key (upsert topics); `skip`: counted and dropped '
            '(see [Real-world streams](real-world-streams.md))'),
        'deleted_field': ('none', "flattened streams (Debezium's `ExtractNewRecordState`, `delete.handling.mode = "
                                  'rewrite`): a record whose field is `true` or `"true"` deletes its key; the field '
                                  'is not a column; `json`, `csv` and Avro rows with a key'),
        'on_truncate': ('`apply`', 'Debezium `op = "t"`: `apply` (the table loses every row of its source table older '
                                   'than the truncate), `skip` (counted), `fail` (stop before committing, exit 65); '
                                   'Debezium formats only'),
        'on_drop_table': ('`keep`', 'a `DROP TABLE` of a source table (a Debezium schema change with a `DROP` in '
                                    '`tableChanges`, Canal `ERASE`, Maxwell `table-drop`) is counted (`dropped_table`) '
                                    'and logged (`drop_table`); `keep` leaves the Hudi table and its rows as they are, '
                                    'and later changes of that name go on into it; `fail` stops the run before '
                                    'committing that batch (exit 65). cdcsync never deletes a table; debezium-json, '
                                    'canal-json and maxwell-json only (see [Whole-database sync]'
                                    '(whole-database-sync.md#new-and-dropped-tables))'),
        'properties': ('`{}`', 'Kafka client properties in the Java names: `security.protocol`, `sasl.*`, `ssl.*` '
                               '(see [Secured brokers](operations.md): both clients read them the same way), '
                               '`auto.offset.reset` (read by `group-offsets`), any other Java consumer setting '
                               "(`fetch.max.bytes`, `isolation.level` …) for Spark's read. A name Spark's consumer "
                               '(kafka-clients 3.4.1) does not know is refused with the closest one, and so are those '
                               "Spark's source sets itself (`group.id`: use `group_id`; `enable.auto.commit`, the "
                               'deserializers, `interceptor.classes`)'),
    },
    'sink': {
        'path': ('required', "the table's base path, any Hadoop path (`file:`, `s3a:`, `hdfs:`, or a local path)"),
        'table_name': ('required', 'Hudi table name (`[A-Za-z_][A-Za-z0-9_]*`)'),
        'table_type': ('`MERGE_ON_READ`', 'or `COPY_ON_WRITE`'),
        'primary_key': ('from the format', 'record key columns. Canal: `pkNames`; Maxwell: `primary_key_columns`; '
                                           'Debezium: the fields of the Kafka message key. `json`/`csv`/`raw` without '
                                           'a key are insert-only'),
        'ordering_field': ('log position, then Kafka offset',
            "column that decides which version of a key wins; by default `_cdc_order`, the change's place in the "
            "source's log (see [Ordering](exactly-once.md#ordering)), so a late or replayed older event never "
            'overwrites a newer one. A column named here replaces that rule for the table; every upsert must fill it '
            '(see [Ordering](exactly-once.md#ordering))'),
        'partition_by': ('`[]`', 'partition columns'),
        'options': ('`{}`', 'any `hoodie.*` option, passed to every Hudi write (e.g. '
                            '`hoodie.compact.inline.max.delta.commits`, index type, file sizing, lock provider for '
                            "multi-writer); the dead-letter table's writes take those about writing rather than "
                            'layout: `hoodie.write.concurrency.*`, `hoodie.write.lock.*`, the failed-writes policy '
                            'and `hoodie.metadata.*`. `hoodie.datasource.write.operation` set here is used for every '
                            'batch, the first one included (see below)'),
        'unrouted': ('`skip`', 'with `[[route]]`: records no route matches are `skip`ped (counted, reason `unrouted`) '
                               'or written to the `default` table `<path>/<table_name>`'),
        'deletes': ('`hard`', '`hard`: a delete removes the row, and a delete marker beside the table keeps older '
                              'changes from bringing it back; `soft`: the row stays with `_cdc_deleted = true` and '
                              'its last image (see [Deletes](exactly-once.md#deletes))'),
    },
    'run': {
        'checkpoint_dir': ('`<sink.path>_cdcsync_checkpoint`',
            'writer lock, the start decided before the first commit, replay state'),
        'trigger_interval': ('`10s`', 'time between batches in continuous mode (`500ms`, `10s`, `5m`, `1h`)'),
        'max_records_per_batch': ('none', 'at most this many messages per micro-batch, shared by partition lag '
                                          '(bounded memory); `run` and `replay-from-offset` (a dead-letter replay '
                                          'writes the records it chose as one batch)'),
        'max_records_per_second': ('none', "paces reading: each batch holds at most one trigger interval's worth (a "
                                           "second's for shorter intervals), and the loop waits so the average rate "
                                           'stays under the limit; `run` and `replay-from-offset`'),
        'on_bad_record': ('`dead-letter`', '`fail` (stop before committing; exit 65), `skip` (count and drop), '
                                           '`dead-letter` (write to the dead-letter table in the same batch)'),
        'max_bad_records': ('none', 'stop `run` or `replay-from-offset` (exit 65) after the batch in which more bad '
                                    'records than this were seen in all (a dead-letter replay reports the records '
                                    'still bad instead)'),
        'dead_letter_path': ('`<sink.path>_dead_letter`', 'the dead-letter Hudi table'),
        'metrics_port': ('none', 'serve Prometheus `/metrics` and `/healthz` on this port while `run` runs '
                                 '(`--metrics-port`; 0: any free port)'),
        'metrics_host': ('`0.0.0.0`', 'the address the metrics endpoint listens on'),
        'source_unavailable_timeout': ('`5min`',
            'brokers that stop answering mid-run (a retriable Kafka error) are waited for, with backoff, this long; '
            'then exit 69 naming them. At start, unreachable brokers exit 69 at once'),
        'write_retries': ('`3`', 'a batch whose Hudi write fails transiently — the Java exception chain holds a write '
                                 'conflict, a lock timeout or a network error to the storage — is written again (the '
                                 'failed attempt stays uncommitted, unread, and Hudi rolls it back: under multi-writer '
                                 'locking once its heartbeat expires; backoff 2 s doubling to 30 s) this many times '
                                 'before exit 74'),
        'log_level': ('`warn`', 'Spark, Hudi and Kafka (JVM) loggers: `error`, `warn` (real problems only; known '
                                'harmless notes quiet), `info`, `debug` (every logger, the quieted ones included); '
                                '`run --log-level`, `run --verbose` (= `info`) override it'),
        'on_data_loss': ('`fail`', 'offsets the table still needs are gone from the topic (retention, '
                                   '`kafka-delete-records`) or the topic was re-created: `fail` stops before writing, '
                                   'naming the range; `skip` goes on from the earliest offset and records the gap '
                                   '(commit metadata, `status --json` `data_loss`, a metric)'),
        'stuck_after': ('`10min`', '`/healthz` answers 503 when the loop has shown no sign of life (a batch planned '
                                   'or committed, a wait between batches) for this long; set it above your longest '
                                   'batch'),
        'table_parallelism': ('`min(8, 2 × cores)`',
            'with `[[route]]`: how many routed tables of one batch are written at once (a bounded pool of threads, '
            'each table still its own Hudi commit carrying the batch\'s offsets and ledger; 1 to 64; refused '
            'without `[[route]]`). A commit is a chain of small Spark jobs planned on the driver, which one table at '
            'a time leaves idle between them, so the default is twice the cores the driver may use, at most 8; `1` '
            'writes them one after another (see [Whole-database sync](whole-database-sync.md#sizing))'),
        'on_table_failure': ('`isolate`',
            'with `[[route]]`: a routed table whose write fails after `write_retries` (storage, lock, an unreadable '
            'table; not a bad record) is set aside: `isolate` lets the other tables commit and advance while the '
            'failed one keeps its position and is tried again (a service after 30 s, doubling up to 10 min; each '
            '`--once` run in its first batch), `status` names it, and `--once` exits 83; every table of a batch '
            'failing at once still stops the run. `stop` ends the run with the failure. Refused without '
            '`[[route]]` (see [Whole-database sync](whole-database-sync.md#isolation))'),
    },
    'schema': {
        'columns': ('`{}`', 'declared column types, `price = "DECIMAL(18,2)"` (Spark SQL types); they win over '
                            'inference, and data that does not fit them is an error'),
        'flatten_nested_columns': ('`false`', 'nested objects become columns named by their path joined with `_` '
                                              '(`{"user": {"zip": …}}` → `user_zip`; Hudi column names take letters, '
                                              'digits and `_` only), in `run`, `replay-from-offset` and '
                                              '`infer-schema` alike; arrays stay JSON text; a name collision (a '
                                              'top-level `user_zip` beside `{"user": {"zip": …}}`) is an error naming '
                                              'both paths (exit 79)'),
        'primitive_as_string': ('`false`', 'every primitive becomes STRING (its JSON text: `7`, `true`; a fraction is '
                                           'read through a double, so `1.50` is stored as `1.5`), in `run` as in '
                                           '`infer-schema`; types a Debezium schema envelope states and '
                                           '`[schema.columns]` still win'),
        'on_incompatible': ('`fail`', 'a type change Hudi cannot apply to an existing column (e.g. BOOLEAN → STRING): '
                                      '`fail` (exit 79, nothing of the batch committed) or `dead-letter` (the column '
                                      'keeps its type; each record whose value does not fit it is a bad record, '
                                      'reason `incompatible_type`; the rest of the batch is committed). See [Schema '
                                      'evolution](schema-evolution.md)'),
        'on_type_conflict': ('`widen`', 'types inferred from schemaless row images (json, maxwell-json, Debezium '
                                        'without the schema envelope, Canal without `mysqlType`), for columns that '
                                        'are not part of the primary key: `widen` (the column widens along the '
                                        'lattice, e.g. BIGINT → STRING) or `dead-letter` (the column keeps its type; '
                                        'records whose value does not fit are bad records, reason '
                                        '`incompatible_type`). Key columns always behave as `dead-letter`; declare a '
                                        "key's type in `[schema.columns]` to change it"),
        'validate_with': ('none', 'a JSON Schema file (draft 2020-12) every row image must pass; failures are bad '
                                  'records (`schema_validation`). It is the one Python step on the path: expect it to '
                                  'cost throughput'),
    },
    'route': {
        'source_table': ('required', "regular expression matched in full against the envelope's `database.table` "
                                     '(`database.schema.table` for connectors with schemas, see '
                                     '[Formats](formats.md)); the first matching route wins. It runs in Spark SQL, so '
                                     'Java regex syntax (`\\p{Lower}`, `\\Q…\\E` and `(?<name>…)` work; `(?P<name>…)` '
                                     'and `(?#…)` do not); the JVM compiles it when `run` or a replay starts '
                                     '(`validate` starts no JVM and does not)'),
        'sink_table': ('required', "table name, or a template where `<>` is the source table's name (`ods_<>`); the "
                                   'table lives at `<sink.path>/<name>`'),
        'primary_key': ("the envelope's key", "this route's record key (wins over the envelope's)"),
        'partition_by': ('`[]`', "this route's partition columns"),
        'table_type': ('`[sink] table_type`', "this route's table type"),
        'source_column': ('none', "a column holding each row's source `database.table` (useful when shards merge)"),
        'options': ('`[sink.options]`', "`hoodie.*` options for this route's table, over the sink's"),
        'deletes': ('`[sink] deletes`', "`hard` or `soft` for this route's table"),
        'transform_sql': ('`[transform] sql`', "this route's table's transform (see [Transform](transform.md))"),
    },
    'transform': {
        'sql': ('none', 'one Spark SQL `SELECT … FROM source [WHERE …]` applied to each change; the table equals '
                        "it applied to the source table (see [Transform](transform.md)). Hudi Streamer's `<SRC>` "
                        'names the view too'),
    },
    'mask': {
        'column': ('required', 'the column to mask'),
        'method': ('required', '`hash` (SHA-256 of salt ‖ value, hex; deterministic, allowed on key columns), '
                               "`redact` (NULL, or `value`), `encrypt` (AES-GCM with Spark's `aes_encrypt`, stored as "
                               'base64 of IV ‖ ciphertext ‖ tag)'),
        'salt_env': ('—', 'environment variable holding the salt, for `hash`'),
        'key_env': ('—', 'environment variable holding the base64 AES key (16, 24 or 32 bytes), for `encrypt`'),
        'value': ('NULL', 'the fixed text `redact` writes'),
        'tables': ('every table', 'regular expression over target table names the mask applies to'),
    },
    'spark': {
        'master': ('`local[*]`', 'Spark master (`local[2]`, `local-cluster[2,1,1024]`, `spark://…`, `yarn`)'),
        'spark.*': ('see `cdcsync/runtime/session.py`', 'any Spark configuration, e.g. `"spark.driver.memory" = "4g"`'),
    },
    'storage': {
        'endpoint': ('AWS', 'the S3 endpoint URL, e.g. `"http://minio:9000"` (`http://` turns TLS off)'),
        'region': ("AWS's default chain", "the bucket's region"),
        'path_style_access': ('`false`', '`true` for `endpoint/bucket/key` URLs (MinIO, Ceph, moto) instead of '
                                         '`bucket.endpoint/key`'),
        'access_key_id': ('—', "with `secret_access_key`; both absent: AWS's default credential chain (environment, "
                               'profile, instance role)'),
        'secret_access_key': ('—', 'e.g. `"${AWS_SECRET_ACCESS_KEY}"`'),
        'session_token': ('—', 'temporary credentials (STS)'),
    },
    'catalog': {
        'database': ('required', 'the database the tables are registered in (created if missing)'),
        'metastore_uri': ('—', "a Hive metastore, `thrift://host:9083` (a cluster's shared catalog)"),
        'metastore_dir': ('—', 'an embedded Derby metastore in this folder (`metastore_db/`, `warehouse/`, '
                               '`derby.log`), for one machine; Derby admits one process at a time'),
    },
}

# what a section is for, above its table
INTROS: dict[str, str] = {
    'transform': ('Shapes rows between the topic and the table: computed and renamed columns, derived partitions, '
                  'filters with view semantics. Checked by `validate` and before `run` starts Spark (see '
                  '[Transform](transform.md)).'),
    'storage': ('How Spark, Hudi and the writer lock reach `s3a://` paths (see [Object storage](object-storage.md)). '
                'Refused when no path of the config is on `s3a://`. Values take `${ENV}`; none is ever printed.'),
    'catalog': ('Registers every table `run` writes — the main table (or each routed one) and the dead-letter table — '
                'by name in a Hive metastore-compatible catalog (see [Catalog](catalog.md)). Exactly one of '
                '`metastore_uri` and `metastore_dir`.'),
}
