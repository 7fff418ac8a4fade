"""The probe's schema-registry check (`--schema-registry`, or the config's `schema_registry_url`): reachable,
the credentials taken, and a subject per topic for the Avro sides (Confluent's TopicNameStrategy)."""

from __future__ import annotations

import time

from cdcsync.exit_codes import ExitCode
from cdcsync.formats.registry import Registry, RegistryClient, RegistryError
from cdcsync.probe.report import FAIL, OK, WARN, Check


def registry_checks(registry: Registry, topics: list[str], sides: tuple[str, ...] = ("value",)) -> list[Check]:
    """`sides`: the subjects' suffixes a topic needs ("value", and "key" for an Avro key)."""
    client, started = RegistryClient(registry), time.perf_counter()
    try:
        subjects = set(client.subjects())
    except RegistryError as e:
        return [Check("registry", registry.url, "registry", FAIL, e.message, e.hint or "", _ms(started),
                      int(e.exit_code), e.message)]
    who = f", authenticated as {registry.user_info.split(':', 1)[0]}" if registry.user_info else ""
    checks = [Check("registry", registry.url, "registry", OK, f"answers, {len(subjects)} subjects{who}",
                    ms=_ms(started))]
    for topic in topics:
        for side in sides:
            subject = f"{topic}-{side}"
            if subject in subjects:
                versions = len(client.subject_schemas(subject))
                checks.append(Check("registry", subject, "subject", OK, f"{versions} schema version(s) registered"))
            else:
                checks.append(Check(
                    "registry", subject, "subject", WARN, "no such subject: no record of the topic can be decoded yet",
                    f"the producer registers '{subject}' with its first record (TopicNameStrategy); another "
                    "naming strategy's ids are dead-lettered as unknown_schema_id", code=int(ExitCode.WARNINGS),
                    finding=f"subject {subject} is not registered"))
    return checks


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
