"""The jar manifest (cdcsync/jars.lock): its parse, its agreement with bundles/spark/pom.xml's resolution, the cache
folder it names, the lookup order of a command's jar folder, and `--version` without a JVM."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from cdcsync.toolchain import jars
from cdcsync.toolchain.jars import Jar, parse_lock, render_lock
from tests.cli import cdcsync

ROOT = Path(__file__).resolve().parents[3]
SHA = "a" * 40


def test_lock_lines_parse_with_and_without_classifier():
    text = f"# header\n\ng:a:1.0 {SHA} 12\nsoftware.amazon.msk:aws-msk-iam-auth:2.4.0:all {'B' * 40} 7  # why\n"
    plain, shaded = parse_lock(text)
    assert plain == Jar("g", "a", "1.0", "", SHA, 12) and plain.file_name == "a-1.0.jar"
    assert shaded.sha1 == "b" * 40 and shaded.file_name == "aws-msk-iam-auth-2.4.0-all.jar"
    assert parse_lock(render_lock([shaded, plain], "h")) == [plain, shaded]


@pytest.mark.parametrize("line", ["g:a 0 1", f"g:a:1 {SHA}", f"g:a:1 {SHA[:-1]} 3", f"g:a:1 {SHA} big"])
def test_a_malformed_lock_line_names_its_number(line):
    with pytest.raises(ValueError, match="line 2: expected 'group:artifact:version"):
        parse_lock(f"# c\n{line}\n")


def test_urls_follow_the_maven_2_layout_of_central():
    jar = Jar("org.apache.hudi", "hudi-spark3.5-bundle_2.12", "1.2.0", "", SHA, 1)
    assert jar.path_in("https://repo1.maven.org/maven2/") == ("https://repo1.maven.org/maven2/org/apache/hudi/"
                                                             "hudi-spark3.5-bundle_2.12/1.2.0/"
                                                             "hudi-spark3.5-bundle_2.12-1.2.0.jar")
    msk = Jar("software.amazon.msk", "aws-msk-iam-auth", "2.4.0", "all", SHA, 1)
    assert msk.path_in("file:///m2") == "file:///m2/software/amazon/msk/aws-msk-iam-auth/2.4.0/" \
                                        "aws-msk-iam-auth-2.4.0-all.jar"


def test_the_shipped_manifest_holds_what_spark_needs():
    names = {(j.group, j.artifact) for j in jars.manifest()}
    v = jars.versions()
    kafka_source = f"spark-sql-kafka-0-10_{v['SCALA_BINARY']}"
    assert {("org.apache.hudi", v["HUDI_SPARK_BUNDLE"]), ("org.apache.spark", kafka_source),
            ("org.apache.hadoop", "hadoop-aws"), ("software.amazon.msk", "aws-msk-iam-auth")} <= names
    hudi = next(j for j in jars.manifest() if j.artifact == v["HUDI_SPARK_BUNDLE"])
    assert hudi.version == v["HUDI_VERSION"]
    assert next(j for j in jars.manifest() if j.artifact == "aws-msk-iam-auth").classifier == "all"


def test_the_manifest_matches_what_the_pom_resolves():
    folder = ROOT / "bundles" / "spark" / "jars"
    assert (folder / ".stamp").exists(), "bundles/spark/jars not fetched: run 'make bundles'"  # a fail, never a skip
    pom = hashlib.sha1((ROOT / "bundles" / "spark" / "pom.xml").read_bytes()).hexdigest()[:12]
    assert f"pom:{pom}" in (folder / ".stamp").read_text().splitlines()[0], \
        "bundles/spark/jars predates bundles/spark/pom.xml: run 'make bundles'"
    fetched = {p.name: hashlib.sha1(p.read_bytes()).hexdigest() for p in folder.glob("*.jar")}
    assert fetched == {j.file_name: j.sha1 for j in jars.manifest()}, \
        "cdcsync/jars.lock is not what bundles/spark/pom.xml resolves: run 'make jars-lock'"
    from devtools.jars_lock import resolved

    coords = {":".join(filter(None, c)) for c, _ in resolved((folder / ".resolved").read_text())}
    assert coords == {j.coordinates for j in jars.manifest()}


def test_cache_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    v = jars.versions()
    assert jars.cache_dir().parent == tmp_path / "cdcsync" / "jars"
    assert jars.cache_dir().name.startswith(f"spark-{v['SPARK_VERSION']}_hudi-{v['HUDI_VERSION']}_")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # the XDG spec: a relative path is ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert jars.cache_dir().parent == tmp_path / "home" / ".cache" / "cdcsync" / "jars"


def test_the_version_set_changes_with_any_jar():
    base = jars.manifest()
    changed = (*base[:-1], Jar(base[-1].group, base[-1].artifact, base[-1].version, base[-1].classifier, SHA, 1))
    assert jars.version_set(base) == jars.version_set(tuple(reversed(base))) != jars.version_set(changed)


def _fill(folder: Path, skip: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for j in jars.manifest():
        if j.file_name != skip:
            with (folder / j.file_name).open("wb") as f:
                f.truncate(j.size)  # sparse: the lookup checks names and sizes, not contents


def test_lookup_order_env_then_clone_then_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    clone = tmp_path / "clone" / "jars"
    clone.mkdir(parents=True)
    (clone.parent / "pom.xml").write_text("<project/>")
    monkeypatch.setattr(jars, "CLONE_JARS", clone)
    monkeypatch.delenv(jars.ENV_VAR, raising=False)

    assert jars.locate().origin == "user cache" and not jars.locate().complete  # nothing anywhere
    _fill(jars.cache_dir(), skip=jars.manifest()[0].file_name)
    assert jars.locate().missing == (jars.manifest()[0].file_name,)
    _fill(jars.cache_dir())
    assert jars.locate() == jars.JarFolder(jars.cache_dir(), "user cache", ())
    (clone / "x.jar").write_text("x")
    (clone / ".stamp").write_text("want\nx.jar\n")  # bundles/fetch.sh finished: the clone's folder wins
    assert jars.locate().origin == "clone"
    monkeypatch.setenv(jars.ENV_VAR, str(tmp_path / "mine"))  # named, so it wins even when absent
    assert jars.locate() == jars.JarFolder(tmp_path / "mine", jars.ENV_VAR, (str(tmp_path / "mine"),))


def test_an_installed_copy_has_no_clone(monkeypatch, tmp_path):
    monkeypatch.setattr(jars, "CLONE_JARS", tmp_path / "site-packages" / "bundles" / "spark" / "jars")
    monkeypatch.delenv(jars.ENV_VAR, raising=False)
    assert [f.origin for f in jars.candidates()] == ["user cache"]


def test_spark_jars_without_any_folder_says_to_fetch(monkeypatch, tmp_path):
    from cdcsync.errors import ToolchainError
    from cdcsync.runtime.session import spark_jars

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(jars, "CLONE_JARS", tmp_path / "none" / "jars")
    monkeypatch.delenv(jars.ENV_VAR, raising=False)
    with pytest.raises(ToolchainError) as e:
        spark_jars()
    assert str(jars.cache_dir()) in e.value.message and "cdcsync jars fetch" in e.value.hint
    _fill(jars.cache_dir())
    assert sorted(Path(p).name for p in spark_jars()) == sorted(j.file_name for j in jars.manifest())


def test_version_prints_every_version_and_the_jar_folder_without_a_jvm(tmp_path):
    import pyspark.version

    p = cdcsync("--version", env={"XDG_CACHE_HOME": str(tmp_path), jars.ENV_VAR: None}, timeout=60, jvm_free=True)
    assert p.returncode == 0, p.stderr
    v = jars.versions()
    assert p.stdout.splitlines()[:4] == [
        "cdcsync 0.1.0", f"Spark {pyspark.version.__version__} (pyspark)",
        f"Hudi {v['HUDI_VERSION']} ({v['HUDI_SPARK_BUNDLE']})",
        f"Kafka client {jars.kafka_client_version()} (kafka-clients, Spark's Kafka source)"]
    assert p.stdout.splitlines()[4].startswith("jars: ")
    empty = cdcsync("--version", env={jars.ENV_VAR: str(tmp_path / "none")}, timeout=60, jvm_free=True)
    assert f"jars: {tmp_path / 'none'} (CDCSYNC_JARS_DIR, incomplete: 1 missing" in empty.stdout
