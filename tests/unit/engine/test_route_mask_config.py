"""[[route]] and [[mask]] in config.toml: validated before Spark starts, secrets read from the environment and
never echoed, close-match hints for typos."""

from __future__ import annotations

import base64

import pytest

from cdcsync.config import load_config
from cdcsync.errors import ConfigError
from tests.configs import minimal, write


def cfg(tmp_path, extra: str):
    return write(tmp_path, minimal(fmt="canal-json") + extra)


def test_routes_load_with_their_own_table_settings(tmp_path):
    c = load_config(cfg(tmp_path, """
[[route]]
source_table = 'app\\.order_\\d+'
sink_table = "ods_<>"
primary_key = ["id"]
table_type = "COPY_ON_WRITE"
source_column = "src"
options = { "hoodie.x.y" = 1 }
"""))
    (r,) = c.routes
    assert r.source_table == r"app\.order_\d+" and r.sink_table == "ods_<>" and r.primary_key == ["id"]
    assert r.table_type == "COPY_ON_WRITE" and r.source_column == "src" and r.options == {"hoodie.x.y": "1"}
    assert c.sink.unrouted == "skip" and c.masks == []


def test_a_route_inherits_sink_deletes_unless_it_sets_its_own(tmp_path):
    from cdcsync.engine.routing import route_config

    c = load_config(cfg(tmp_path, 'deletes = "soft"\n[[route]]\nsource_table = "a\\\\..*"\nsink_table = "a_<>"\n'
                                  '[[route]]\nsource_table = "b\\\\..*"\nsink_table = "b_<>"\ndeletes = "hard"\n'))
    assert [route_config(c, i, f"{n}_x").sink.deletes for i, n in enumerate("ab")] == ["soft", "hard"]
    assert route_config(c, -1, "t").sink.deletes == "soft"  # the default route is [sink]'s table


@pytest.mark.parametrize("extra, needle", [
    ('[[route]]\nsource_tabel = "a"\nsink_table = "x"\n', "did you mean 'route[0].source_table'"),
    ('[[route]]\nsource_table = "a"\nsink_table = "x-y"\n', "route[0].sink_table"),
    ('[[mask]]\ncolumn = "c"\nmethod = "hsh"\n', "did you mean 'hash'"),
    ('[[mask]]\ncolumn = "c"\nmethod = "hash"\n', "needs 'salt_env'"),
    ('[[mask]]\ncolumn = "c"\nmethod = "redact"\nkey_env = "K"\n', "does not take 'key_env'"),
    ('[sink]\nunrouted = "drop"\n', None),
    ('[[route]]\nsource_table = "a"\nsink_table = "x"\npartition_by = ["r"]\noptions = { "hoodie.index.type" = '
     '"BUCKET" }\n', "route[0].options 'hoodie.index.type' = 'BUCKET' looks a key up in its own partition only, and "
     "route[0].partition_by is set"),
])
def test_bad_route_and_mask_settings_are_named(tmp_path, extra, needle):
    if extra.startswith("[sink]"):  # a second [sink] is a TOML error; patch the key in instead
        text = minimal(fmt="canal-json").replace('table_name = "t"', 'table_name = "t"\nunrouted = "drop"')
        p = write(tmp_path, text)
        needle = "'sink.unrouted' is 'drop'"
    else:
        p = cfg(tmp_path, extra)
    with pytest.raises(ConfigError) as err:
        load_config(p)
    assert needle in err.value.message


def test_mask_secrets_come_from_the_environment_and_are_not_echoed(tmp_path, monkeypatch):
    text = '[[mask]]\ncolumn = "ssn"\nmethod = "encrypt"\nkey_env = "T_KEY"\n'
    monkeypatch.delenv("T_KEY", raising=False)
    with pytest.raises(ConfigError) as err:
        load_config(cfg(tmp_path, text))
    assert "mask[0]" in err.value.message and "T_KEY" in err.value.message and "ssn" in err.value.message
    monkeypatch.setenv("T_KEY", "not-a-key-but-secret")
    with pytest.raises(ConfigError) as err:
        load_config(cfg(tmp_path, text))
    assert "16, 24 or 32 bytes" in err.value.message and "not-a-key-but-secret" not in err.value.render()
    key = base64.b64encode(b"k" * 32).decode()
    monkeypatch.setenv("T_KEY", key)
    (m,) = load_config(cfg(tmp_path, text)).masks
    assert m.secret == key and key not in repr(m)


def test_validate_lists_routes_and_masks_without_secrets(tmp_path, monkeypatch):
    import json

    from tests.cli import cdcsync

    key = base64.b64encode(bytes(range(32))).decode()
    p = cfg(tmp_path, """
[[route]]
source_table = 'app\\.order_\\d+'
sink_table = "ods_order"
primary_key = ["id"]

[[route]]
source_table = 'app\\..*'
sink_table = "ods_<>"
table_type = "COPY_ON_WRITE"

[[mask]]
column = "email"
method = "encrypt"
key_env = "T_VALIDATE_KEY"
""")
    run = lambda *a: cdcsync("validate", p, *a, timeout=60, env={"T_VALIDATE_KEY": key})  # noqa: E731
    out = json.loads(run("--json").stdout)
    assert out["valid"] and out["unrouted"] == "skip" and out["deletes"] == "hard"
    assert [r["deletes"] for r in out["routes"]] == ["hard", "hard"]
    assert [(r["sink_table"], r["table_type"], r["primary_key"], r["path"]) for r in out["routes"]] == [
        ("ods_order", "MERGE_ON_READ", ["id"], "/tmp/x/ods_order"), ("ods_<>", "COPY_ON_WRITE", None, "/tmp/x/ods_<>")]
    assert out["masks"] == [{"column": "email", "method": "encrypt", "tables": ".*"}]
    plain = run()
    assert plain.returncode == 0
    assert "2 route(s); other tables: skipped (counted)" in plain.stdout
    assert "ods_<> (COPY_ON_WRITE, key from the messages, hard deletes) at /tmp/x/ods_<>, '<>' being each source" \
        in plain.stdout
    assert "mask email: encrypt" in plain.stdout
    assert key not in plain.stdout + plain.stderr + json.dumps(out)
