"""Which Kafka client properties `[source.properties]` may set. Spark reads each batch with the Java consumer of
kafka-clients 3.4.1 (what spark-sql-kafka 3.5 depends on), which ignores a name it does not know, with a line in
its log at most: a misspelt `security.protocol` would read in plain text. So a name is refused unless that consumer
knows it or cdcsync converts it (librdkafka's spellings, kafka/security.py), and the names Spark's source manages
itself are refused with what to set instead. tests/integration/kafka/test_client_keys.py holds the list to the
consumer's own."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from cdcsync.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

# ConsumerConfig.configNames() of kafka-clients 3.4.1
CONSUMER = frozenset({
    "allow.auto.create.topics", "auto.commit.interval.ms", "auto.include.jmx.reporter", "auto.offset.reset",
    "bootstrap.servers", "check.crcs", "client.dns.lookup", "client.id", "client.rack", "connections.max.idle.ms",
    "default.api.timeout.ms", "enable.auto.commit", "exclude.internal.topics", "fetch.max.bytes",
    "fetch.max.wait.ms", "fetch.min.bytes", "group.id", "group.instance.id", "heartbeat.interval.ms",
    "interceptor.classes", "internal.leave.group.on.close", "internal.throw.on.fetch.stable.offset.unsupported",
    "isolation.level", "key.deserializer", "max.partition.fetch.bytes", "max.poll.interval.ms", "max.poll.records",
    "metadata.max.age.ms", "metric.reporters", "metrics.num.samples", "metrics.recording.level",
    "metrics.sample.window.ms", "partition.assignment.strategy", "receive.buffer.bytes", "reconnect.backoff.max.ms",
    "reconnect.backoff.ms", "request.timeout.ms", "retry.backoff.ms", "sasl.client.callback.handler.class",
    "sasl.jaas.config", "sasl.kerberos.kinit.cmd", "sasl.kerberos.min.time.before.relogin",
    "sasl.kerberos.service.name", "sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.ticket.renew.window.factor",
    "sasl.login.callback.handler.class", "sasl.login.class", "sasl.login.connect.timeout.ms",
    "sasl.login.read.timeout.ms", "sasl.login.refresh.buffer.seconds", "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter", "sasl.login.retry.backoff.max.ms",
    "sasl.login.retry.backoff.ms", "sasl.mechanism", "sasl.oauthbearer.clock.skew.seconds",
    "sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms", "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.token.endpoint.url",
    "security.protocol", "security.providers", "send.buffer.bytes", "session.timeout.ms",
    "socket.connection.setup.timeout.max.ms", "socket.connection.setup.timeout.ms", "ssl.cipher.suites",
    "ssl.enabled.protocols", "ssl.endpoint.identification.algorithm", "ssl.engine.factory.class",
    "ssl.key.password", "ssl.keymanager.algorithm", "ssl.keystore.certificate.chain", "ssl.keystore.key",
    "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.type", "ssl.protocol", "ssl.provider",
    "ssl.secure.random.implementation", "ssl.trustmanager.algorithm", "ssl.truststore.certificates",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type", "value.deserializer"
})
LIBRDKAFKA = frozenset({"ssl.ca.location", "sasl.username", "sasl.password", "ssl.certificate.location",
                        "ssl.key.location", "enable.ssl.certificate.verification"})
# consumer names cdcsync or Spark's Kafka source sets, or Spark forbids, and what a config sets instead
MANAGED = {
    "bootstrap.servers": "set source.bootstrap_servers, which both the offset planner and Spark's read use",
    "group.id": "set source.group_id: the group cdcsync commits each batch's offsets to, for lag monitoring",
    "enable.auto.commit": "remove it: a batch's offsets are committed with its rows, in the Hudi commit",
    "key.deserializer": "remove it: Spark reads keys as bytes; source.key_format decodes them",
    "value.deserializer": "remove it: Spark reads values as bytes; source.format decodes them",
    "interceptor.classes": "remove it: Spark's Kafka source does not run consumer interceptors",
}


def check(props: dict[str, str], path: Path) -> None:
    """Refuse a name of config file `path`'s `props` that the consumer would ignore or Spark manages, naming the
    closest known name."""
    for name in props:
        key, file = f'source.properties."{name}"', str(path)
        if name in MANAGED:
            raise ConfigError(f"{path}: [source.properties] {name} is set by cdcsync or Spark's Kafka source",
                              hint=MANAGED[name], key=key, file=file)
        if name in CONSUMER or name in LIBRDKAFKA:
            continue
        close = difflib.get_close_matches(name, sorted(CONSUMER | LIBRDKAFKA), n=1, cutoff=0.75)
        raise ConfigError(f"{path}: [source.properties] {name} is not a Kafka consumer property" +
                          (f"; did you mean {close[0]}?" if close else ""), key=key, file=file,
                          hint="the Java client would ignore it; the names are at "
                               "https://kafka.apache.org/34/documentation.html#consumerconfigs")
