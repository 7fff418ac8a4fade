"""A Confluent-compatible schema registry read without a JVM (Confluent Schema Registry, Apicurio's `ccompat` API,
Karapace): writer schemas by id, and the ids a subject's versions have. Schemas by id never change, so they are
cached for the process's life."""

from __future__ import annotations

import base64
import json
import ssl
import struct
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, cast

from cdcsync.errors import CdcsyncError
from cdcsync.exit_codes import ExitCode
from cdcsync.formats.base import BadRecord
from cdcsync.formats.vocabulary import BAD_REASONS, NOT_AVRO_WIRE_FORMAT

HEADER_BYTES = 5


class RegistryError(CdcsyncError):
    """The schema registry did not answer, refused the credentials, or answered what is not a registry."""

    exit_code = ExitCode.UNREACHABLE


class UnknownSchemaId(LookupError):
    pass


@dataclass(frozen=True)
class Registry:
    """Where the registry is and how to reach it; `user_info` ("user:password") is never printed."""
    url: str
    user_info: str | None = field(default=None, repr=False)
    ca_file: str | None = None
    timeout_s: float = 10.0


def schema_id(value: bytes) -> int:
    """The writer schema id of a Confluent wire-format message (magic byte 0, 4-byte big-endian id, body)."""
    if len(value) < HEADER_BYTES or value[0] != 0:
        raise BadRecord(NOT_AVRO_WIRE_FORMAT, BAD_REASONS[NOT_AVRO_WIRE_FORMAT])
    return int(struct.unpack(">I", value[1:HEADER_BYTES])[0])


class RegistryClient:
    def __init__(self, registry: Registry):
        self.registry = registry
        self._schemas: dict[int, str] = {}
        self._versions: dict[tuple[str, int], int] = {}  # (subject, version) → id: a registered version never changes
        self._context = ssl.create_default_context(cafile=registry.ca_file) if registry.ca_file else None

    def schema(self, sid: int) -> str:
        """The writer schema (Avro JSON text) of `sid`; UnknownSchemaId when the registry has no such id."""
        if sid not in self._schemas:
            doc = self._get(f"/schemas/ids/{sid}", missing=UnknownSchemaId(sid))
            if doc.get("schemaType", "AVRO") != "AVRO":
                raise RegistryError(f"schema id {sid} at {self.registry.url} is {doc['schemaType']}, not Avro",
                                    hint="use the format the topic's serializer wrote")
            self._schemas[sid] = doc["schema"]
        return self._schemas[sid]

    def subject_schemas(self, subject: str) -> dict[int, str]:
        """{id: schema} of every version of `subject` (empty when the subject does not exist)."""
        out = {}
        for version in self._get(f"/subjects/{subject}/versions", missing=[]):
            if (subject, version) not in self._versions:
                doc = self._get(f"/subjects/{subject}/versions/{version}", missing=None)
                if not doc:
                    continue
                self._schemas.setdefault(doc["id"], doc["schema"])
                self._versions[subject, version] = doc["id"]
            sid = self._versions[subject, version]
            out[sid] = self._schemas[sid]
        return out

    def subjects(self) -> list[str]:
        return cast(list[str], self._get("/subjects", missing=[]))

    def _get(self, path: str, missing: object) -> Any:
        """The JSON document at `path`; `missing` is raised (an exception) or returned when it is not found."""
        url = self.registry.url.rstrip("/") + path
        req = urllib.request.Request(url, headers={"Accept": "application/vnd.schemaregistry.v1+json, "
                                                             "application/json"})
        if self.registry.user_info:
            req.add_header("Authorization", "Basic " + base64.b64encode(self.registry.user_info.encode()).decode())
        try:
            with urllib.request.urlopen(req, timeout=self.registry.timeout_s, context=self._context) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            if e.code == 404:
                if isinstance(missing, Exception):
                    raise missing from None
                return missing
            if e.code in (401, 403):
                raise RegistryError(f"the schema registry at {self.registry.url} refused the credentials "
                                    f"(HTTP {e.code})", exit_code=ExitCode.AUTH, url=self.registry.url,
                                    hint="check [source] schema_registry_user_info (user:password)") from None
            raise RegistryError(f"the schema registry at {url} answered HTTP {e.code}", url=self.registry.url,
                                hint="check [source] schema_registry_url: it is the registry's base URL "
                                "(Apicurio: …/apis/ccompat/v7)") from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", e)
            raise RegistryError(f"the schema registry at {self.registry.url} cannot be reached: {reason}",
                                url=self.registry.url, hint="start the registry, or correct [source] "
                                "schema_registry_url") from None
