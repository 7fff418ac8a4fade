"""[catalog]: exactly one metastore, a database name Hive takes, and the settings a session needs to see it."""

from __future__ import annotations

import pytest

from cdcsync.config import load_config
from cdcsync.errors import ConfigError
from tests.configs import minimal, write


def load(tmp_path, text: str):
    return load_config(write(tmp_path, minimal(fmt="json") + "\n[catalog]\n" + text))


def test_an_embedded_metastore_lives_in_its_folder(tmp_path):
    cat = load(tmp_path, f'database = "lake"\nmetastore_dir = "{tmp_path}/ms"\n').catalog
    s = cat.spark_settings()
    assert s["spark.sql.catalogImplementation"] == "hive"
    assert s["spark.hadoop.javax.jdo.option.ConnectionURL"] == \
        f"jdbc:derby:;databaseName={tmp_path}/ms/metastore_db;create=true"
    assert s["spark.sql.warehouse.dir"] == f"{tmp_path}/ms/warehouse"
    assert s["spark.driver.extraJavaOptions"] == f"-Dderby.system.home={tmp_path}/ms"


def test_a_cluster_metastore_is_a_thrift_uri(tmp_path):
    s = load(tmp_path, 'database = "lake"\nmetastore_uri = "thrift://hms:9083"\n').catalog.spark_settings()
    assert s == {"spark.sql.catalogImplementation": "hive", "spark.hadoop.hive.metastore.uris": "thrift://hms:9083"}


@pytest.mark.parametrize("text, words", [
    ('database = "lake"\n', "exactly one of 'metastore_uri'"),
    ('database = "lake"\nmetastore_uri = "thrift://h:1"\nmetastore_dir = "/d"\n', "exactly one of 'metastore_uri'"),
    ('database = "lake"\nmetastore_uri = "http://h:1"\n', "'catalog.metastore_uri' = 'http://h:1' does not match"),
    ('database = "a-b"\nmetastore_dir = "/d"\n', "'catalog.database' = 'a-b' does not match"),
    ('metastore_dir = "/d"\n', "missing required key 'catalog.database'"),
    ('database = "lake"\nmetastore_dir = "/d"\nmetastore = "x"\n', "unknown key 'catalog.metastore'"),
])
def test_catalog_mistakes_are_refused(tmp_path, text, words):
    with pytest.raises(ConfigError) as e:
        load(tmp_path, text)
    assert words in e.value.render()
