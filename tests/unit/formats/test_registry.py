"""The JVM-free registry client against a local HTTP stub: schemas by id and by subject, each fetched once; a
missing id is UnknownSchemaId; refused credentials exit 77 and an unreachable registry 69, naming the URL and never
the password."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cdcsync.exit_codes import ExitCode
from cdcsync.formats.registry import Registry, RegistryClient, RegistryError, UnknownSchemaId

SCHEMA = json.dumps({"type": "record", "name": "r", "fields": [{"name": "id", "type": "int"}]})


@pytest.fixture
def stub():
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            seen.append(self.path)
            if self.headers.get("Authorization") not in (None, "Basic dTpwdw=="):  # u:pw
                return self._send(401, {"error_code": 401})
            routes = {"/schemas/ids/5": {"schema": SCHEMA}, "/subjects/t-value/versions": [1, 2],
                      "/subjects/t-value/versions/1": {"id": 5, "schema": SCHEMA},
                      "/subjects/t-value/versions/2": {"id": 6, "schema": SCHEMA}}
            if self.path in routes:
                return self._send(200, routes[self.path])
            return self._send(404, {"error_code": 40403})

        def _send(self, code, body):
            self.send_response(code)
            self.end_headers()
            self.wfile.write(json.dumps(body).encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", seen
    server.shutdown()


def test_schemas_by_id_and_subject_are_fetched_once(stub):
    url, seen = stub
    client = RegistryClient(Registry(url))
    assert client.schema(5) == SCHEMA and client.schema(5) == SCHEMA
    assert client.subject_schemas("t-value") == {5: SCHEMA, 6: SCHEMA}
    assert client.subject_schemas("t-value") == {5: SCHEMA, 6: SCHEMA}
    assert seen.count("/schemas/ids/5") == 1 and seen.count("/subjects/t-value/versions/2") == 1
    assert client.subject_schemas("other-value") == {}
    with pytest.raises(UnknownSchemaId):
        client.schema(99)


def test_credentials_and_reachability_errors_name_the_url(stub):
    url, _ = stub
    assert RegistryClient(Registry(url, user_info="u:pw")).schema(5) == SCHEMA
    with pytest.raises(RegistryError) as e:
        RegistryClient(Registry(url, user_info="u:wrong-pw-3k")).schema(5)
    assert e.value.exit_code == ExitCode.AUTH and url in e.value.message and "wrong-pw-3k" not in e.value.render()
    with pytest.raises(RegistryError) as e:
        RegistryClient(Registry("http://127.0.0.1:9", timeout_s=2)).schema(5)
    assert e.value.exit_code == ExitCode.UNREACHABLE and "127.0.0.1:9 cannot be reached" in e.value.message
