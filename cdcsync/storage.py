"""Where cdcsync's paths live. Small files read without a JVM (`Files`: a timeline, a lock, a progress record) on
local paths and s3a://; and the one reading of [storage] for each client that reaches the store: Hadoop's S3A
(Spark, Hudi), boto3 (the writer lock's conditional writes, `Files`) and object_store (hudi-rs)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypedDict, cast
from urllib.parse import urlsplit

from cdcsync.errors import ConfigError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from pyspark.sql import SparkSession

    from cdcsync.config.model import StorageConfig

SCHEME = "s3a://"


def is_s3(path: str) -> bool:
    return path.startswith(SCHEME)


def is_local(path: str) -> bool:
    """A plain or file: path, which Python reads directly (object stores and HDFS need Hadoop's file systems)."""
    return "://" not in path or path.startswith("file://")


def local_path(path: str) -> Path:
    """A local (or file:) path as a Path; any other scheme is refused, naming the JVM-free reader's limit."""
    if not is_local(path):
        raise ConfigError(f"{path} is neither local nor s3a://: status and dead-letter list|show read tables "
                          "without a JVM, from local and s3a:// paths", hint="run them on a machine that mounts the "
                          "table, or read it with Spark or Hudi's CLI")
    return Path(path.removeprefix("file://").removeprefix("file:"))


class Listing(Protocol):
    """What lists a folder: `Files`, or the Spark session's Hadoop file systems (runtime.compactor.HadoopFiles)."""

    def entries(self, directory: str) -> dict[str, bool]: ...


class Files:
    """Small files read without a JVM: local paths directly, s3a:// through boto3 with [storage]'s settings."""

    def __init__(self, settings: StorageConfig | None = None) -> None:
        self._settings = settings
        self._client: S3Client | None = None

    def entries(self, directory: str) -> dict[str, bool]:
        """{name: is a directory} of what lies directly under `directory`; empty when it does not exist."""
        if not is_s3(directory):
            d = local_path(directory)
            return {c.name: c.is_dir() for c in d.iterdir()} if d.is_dir() else {}
        bucket, key = split(directory)
        prefix = f"{key}/" if key else ""
        out: dict[str, bool] = {}
        for page in self._s3().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix, Delimiter="/"):
            out |= {o["Key"][len(prefix):]: False for o in page.get("Contents", [])}
            out |= {p["Prefix"][len(prefix):].rstrip("/"): True for p in page.get("CommonPrefixes", [])}
        return out

    def read(self, path: str) -> bytes | None:
        """The file's bytes, or None when it does not exist."""
        if not is_s3(path):
            try:
                return local_path(path).read_bytes()
            except (FileNotFoundError, NotADirectoryError):
                return None
        s3 = self._s3()
        bucket, key = split(path)
        try:
            return s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except s3.exceptions.NoSuchKey:
            return None

    def _s3(self) -> S3Client:
        if self._client is None:
            self._client = client(self._settings)
        return self._client


def split(path: str) -> tuple[str, str]:
    """`s3a://bucket/a/b` → ("bucket", "a/b")."""
    bucket, _, key = path.removeprefix(SCHEME).partition("/")
    return bucket, key.strip("/")


def hadoop_settings(storage: StorageConfig | None) -> dict[str, str]:
    """[storage] as Hadoop configuration keys (fs.s3a.*); empty when AWS's defaults apply."""
    if storage is None:
        return {}
    out = {}
    if storage.endpoint:
        out["fs.s3a.endpoint"] = storage.endpoint
        out["fs.s3a.connection.ssl.enabled"] = str(urlsplit(storage.endpoint).scheme == "https").lower()
    if storage.region:
        out["fs.s3a.endpoint.region"] = storage.region
    if storage.path_style_access is not None:
        out["fs.s3a.path.style.access"] = str(storage.path_style_access).lower()
    if storage.access_key_id:
        out["fs.s3a.access.key"] = storage.access_key_id
        out["fs.s3a.secret.key"] = cast(str, storage.secret_access_key)  # the loader requires it with the key id
        provider = "SimpleAWSCredentialsProvider"
        if storage.session_token:
            out["fs.s3a.session.token"] = storage.session_token
            provider = "TemporaryAWSCredentialsProvider"
        out["fs.s3a.aws.credentials.provider"] = f"org.apache.hadoop.fs.s3a.{provider}"
    return out


def apply(spark: SparkSession, storage: StorageConfig | None) -> None:
    """Set [storage] on the running session's Hadoop configuration: in the JVM's memory only — Spark settings given
    at launch travel on the java command line, where any local user could read a secret key."""
    conf = spark._jsc.hadoopConfiguration()
    for k, v in hadoop_settings(storage).items():
        conf.set(k, v)


class _Credentials(TypedDict, total=False):
    """boto3.client's credential keywords: all three given, or none (AWS's default chain)."""

    aws_access_key_id: str | None
    aws_secret_access_key: str | None
    aws_session_token: str | None


def client(storage: StorageConfig | None) -> S3Client:
    """A boto3 S3 client with the same endpoint, region, addressing and credentials as Spark's S3A."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise ConfigError("s3a:// paths need boto3 (the writer lock uses S3's conditional writes)",
                          hint="pip install 'cdcsync[s3]'") from None
    s = storage
    kwargs: _Credentials = {}
    if s and s.access_key_id:
        kwargs = {"aws_access_key_id": s.access_key_id, "aws_secret_access_key": s.secret_access_key,
                  "aws_session_token": s.session_token}
    style: Literal["path", "auto"] = "path" if s and s.path_style_access else "auto"
    return boto3.client("s3", endpoint_url=s.endpoint if s else None, region_name=(s.region if s else None),
                        config=Config(s3={"addressing_style": style}, retries={"mode": "standard"}), **kwargs)


def reader_options(storage: StorageConfig | None) -> dict[str, str]:
    """[storage] as object_store's options (hudi-rs reads an `s3://` table with these)."""
    if storage is None:
        return {}
    out = {}
    if storage.endpoint:
        out["aws_endpoint_url"] = storage.endpoint
        out["aws_allow_http"] = str(storage.endpoint.startswith("http://")).lower()
    if storage.region:
        out["aws_region"] = storage.region
    if storage.path_style_access is not None:
        out["aws_virtual_hosted_style_request"] = str(not storage.path_style_access).lower()
    if storage.access_key_id:
        # the loader requires the secret with the key id
        out |= {"aws_access_key_id": storage.access_key_id,
                "aws_secret_access_key": cast(str, storage.secret_access_key)}
        if storage.session_token:
            out["aws_session_token"] = storage.session_token
    return out
