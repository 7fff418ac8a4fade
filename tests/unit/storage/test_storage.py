"""[storage]: one reading of the S3 settings for S3A, boto3 and hudi-rs; refused where it would be ignored; the
writer lock on S3 through conditional writes (moto's in-process S3 here; the real server in tests/integration)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cdcsync import storage
from cdcsync.config import load_config
from cdcsync.errors import ConfigError
from cdcsync.runtime.lock import ConcurrentWriterError, WriterLock
from tests.configs import minimal, write


def config(tmp_path: Path, storage: str, path: str = "s3a://lake/cdc/t") -> Path:
    return write(tmp_path, minimal(path) + "\n[storage]\n" + storage)


def test_storage_becomes_s3a_settings_with_the_secret_hidden(tmp_path, monkeypatch):
    monkeypatch.setenv("S3_SECRET", "s3cr3t-value")
    cfg = load_config(config(tmp_path, 'endpoint = "http://127.0.0.1:9000"\nregion = "eu-west-1"\n'
                                       'path_style_access = true\naccess_key_id = "AKIA1"\n'
                                       'secret_access_key = "${S3_SECRET}"\n'))
    assert storage.hadoop_settings(cfg.storage) == {
        "fs.s3a.endpoint": "http://127.0.0.1:9000", "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.endpoint.region": "eu-west-1", "fs.s3a.path.style.access": "true", "fs.s3a.access.key": "AKIA1",
        "fs.s3a.secret.key": "s3cr3t-value",
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"}
    assert storage.reader_options(cfg.storage) == {
        "aws_endpoint_url": "http://127.0.0.1:9000", "aws_allow_http": "true", "aws_region": "eu-west-1",
        "aws_virtual_hosted_style_request": "false", "aws_access_key_id": "AKIA1",
        "aws_secret_access_key": "s3cr3t-value"}
    assert "s3cr3t" not in repr(cfg)


def test_no_storage_keys_leave_aws_defaults(tmp_path):
    cfg = load_config(config(tmp_path, ""))
    assert storage.hadoop_settings(cfg.storage) == {} and storage.reader_options(None) == {}


def test_a_session_token_selects_temporary_credentials(tmp_path):
    cfg = load_config(config(tmp_path, 'access_key_id = "A"\nsecret_access_key = "S"\nsession_token = "T"\n'
                                       'endpoint = "https://s3.example.com"\n'))
    s = storage.hadoop_settings(cfg.storage)
    assert s["fs.s3a.session.token"] == "T" and s["fs.s3a.connection.ssl.enabled"] == "true"
    assert s["fs.s3a.aws.credentials.provider"].endswith("TemporaryAWSCredentialsProvider")


@pytest.mark.parametrize("storage, path, words", [
    ('endpoint = "http://h:1"\n', "/tmp/local/t", ["[storage] configures s3a:// paths", "key=storage"]),
    ('access_key_id = "A"\n', "s3a://b/t", ["'storage.secret_access_key' is missing"]),
    ('secret_access_key = "S"\n', "s3a://b/t", ["'storage.access_key_id' is missing"]),
    ('endpont = "http://h:1"\n', "s3a://b/t", ["unknown key 'storage.endpont'", "did you mean 'storage.endpoint'?"]),
    ('endpoint = "h:1"\n', "s3a://b/t", ["'storage.endpoint' = 'h:1' does not match"]),
])
def test_storage_mistakes_are_refused(tmp_path, storage, path, words):
    with pytest.raises(ConfigError) as e:
        load_config(config(tmp_path, storage, path))
    text = e.value.render() + " " + " ".join(f"{k}={v}" for k, v in e.value.facts.items())
    for w in words:
        assert w in text, text


def test_a_secret_in_a_refused_storage_table_is_not_echoed(tmp_path):
    with pytest.raises(ConfigError) as e:
        load_config(config(tmp_path, 'secret_access_key = 12345678\naccess_key_id = "A"\n'))
    assert "12345678" not in e.value.render()


def test_split():
    assert storage.split("s3a://lake/a/b/") == ("lake", "a/b")


@pytest.fixture
def s3(monkeypatch):
    import moto

    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(k, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with moto.mock_aws():
        import boto3

        boto3.client("s3").create_bucket(Bucket="lake")
        yield boto3.client("s3")


def test_the_s3_lock_admits_one_writer_and_a_dead_ones_lock_is_taken_over(s3, monkeypatch):
    first = WriterLock(None, "s3a://lake/t_ckpt", "cdcsync run")
    first.acquire("t")
    body = s3.get_object(Bucket="lake", Key="t_ckpt/writer.lock")["Body"].read()
    assert first.holder()["pid"] == os.getpid()
    # a second process: another pid on this host, whose holder (this process) is alive
    monkeypatch.setattr(os, "getpid", lambda: 4_000_000)
    second = WriterLock(None, "s3a://lake/t_ckpt", "cdcsync replay-from-offset")
    with pytest.raises(ConcurrentWriterError, match="being written by cdcsync run"):
        second.acquire("t")
    assert s3.get_object(Bucket="lake", Key="t_ckpt/writer.lock")["Body"].read() == body  # untouched
    # the holder dies (its pid no longer runs): the lock is taken over, and the old holder's heartbeat fails
    monkeypatch.setattr("cdcsync.runtime.lock.holder_alive", lambda info: info["pid"] == 4_000_000)
    second.acquire("t")
    assert second.holder()["what"] == "cdcsync replay-from-offset"
    with pytest.raises(ConcurrentWriterError, match="taken over"):
        first.heartbeat(every_s=0)
    first.release()  # not its lock any more: nothing deleted
    assert second.holder() is not None
    second.release()
    assert second.holder() is None


def test_the_s3_lock_refuses_a_store_that_ignores_conditions(s3, monkeypatch):
    lock = WriterLock(None, "s3a://lake/other", "cdcsync run")
    real = lock._file._s3.put_object
    monkeypatch.setattr(lock._file._s3, "put_object",
                        lambda **kw: real(**{k: v for k, v in kw.items() if not k.startswith("If")}))
    with pytest.raises(ConfigError, match="ignores conditional writes"):
        lock.acquire("t")
