"""Sources encrypted with Parquet modular encryption (docs/security.md#encrypted-columns).

An index stores each file's filter and counts in plaintext, so create and every refresh refuse, before writing
anything, an indexed column that is encrypted in any file and any file whose footer is encrypted. With
spark.hsbloom.index.encryption=columns they read the files' master keys first, and refuse, naming them, files
that disagree and anything encrypted (storing an encrypted index is not built yet). The files are
real encrypted Parquet, written by Spark through parquet-java's PropertiesDrivenCryptoFactory with the test KMS
client (jvm/testkms, on the session's classpath: tests/conftest.py).
"""

from __future__ import annotations

import base64
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from py4j.java_gateway import JavaClass

import hsbloom
from hsbloom import BFIndexConfig, settings
from hsbloom.errors import EncryptedSourceError, IndexBuildError, InvalidConfigError
from hsbloom.explain import files_read
from pruning_support import outcomes

# The read settings: what a session holding the keys reads encrypted files with.
KEYS = {"k1": bytes(range(16)), "k2": bytes(range(16, 32))}
READ = {
    "parquet.crypto.factory.class": "org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory",
    "parquet.encryption.kms.client.class": "hsbloom.testkms.TestKmsClient",
    "parquet.encryption.key.list": ",".join(f"{k}:{base64.b64encode(v).decode()}" for k, v in KEYS.items()),
}


def encrypting(plaintext_footer: bool) -> dict[str, str]:
    """Write settings: column ssn under key k1, the footer under k2 (in plaintext-footer mode, only signed)."""
    return {**READ, "parquet.encryption.column.keys": "k1:ssn", "parquet.encryption.footer.key": "k2",
            "parquet.encryption.plaintext.footer": str(plaintext_footer).lower()}


@pytest.fixture(scope="module", autouse=True)
def test_kms(spark) -> None:
    kms = spark._jvm.hsbloom.testkms.TestKmsClient
    assert isinstance(kms, JavaClass), (
        "hsbloom.testkms.TestKmsClient is not on the session's classpath: build jvm/target/hsbloom-test-kms.jar "
        "with ./dev.sh sbt testKms/package (./dev.sh test builds it)"
    )


def people(spark, start: int, end: int):
    """Rows with an id and a social security number, in two files."""
    return spark.range(start, end, numPartitions=2).selectExpr("id", "format_string('%09d', id * 7919) AS ssn")


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory) -> dict[str, str]:
    """The same people written with ssn encrypted, once with a plaintext footer and once with an encrypted one."""
    root = tmp_path_factory.mktemp("encrypted")
    paths = {}
    for footer in ("plaintext", "encrypted"):
        paths[footer] = str(root / footer)
        people(spark, 0, 40).write.options(**encrypting(footer == "plaintext")).parquet(paths[footer])
        magic = {p.read_bytes()[-4:] for p in Path(paths[footer]).glob("*.parquet")}
        assert magic == ({b"PAR1"} if footer == "plaintext" else {b"PARE"})
    return paths


def everything_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else []


@pytest.mark.parametrize("footer", ["plaintext", "encrypted"])
def test_an_encrypted_column_is_refused_at_create_and_nothing_is_written(spark, system_path, tables, footer):
    hs = hsbloom.Hyperspace(spark)
    with pytest.raises(EncryptedSourceError) as refused:
        hs.create_index(spark.read.options(**READ).parquet(tables[footer]), BFIndexConfig("ssns", ["ssn"]))
    message = str(refused.value)
    assert message.startswith("cannot create index 'ssns': ") and message.endswith("Nothing was written")
    assert "'ssn'" in message and "docs/security.md#encrypted-columns" in message
    assert f"index encryption ({settings.INDEX_ENCRYPTION})" in message
    if footer == "plaintext":
        assert "column 'ssn' is encrypted" in message and "Index other columns of this table" in message
    else:
        assert "has an encrypted footer" in message and "parquet.encryption.plaintext.footer=true" in message
    assert tables[footer] in message  # the example file
    assert not system_path.exists()  # no log, no data, not even the system path's directory


def test_an_encrypted_footer_refuses_every_column(spark, system_path, tables):
    """Even an unencrypted column: the index would reveal the row and null counts the footer hides."""
    with pytest.raises(EncryptedSourceError, match="column 'id' cannot be indexed: .* has an encrypted footer"):
        hsbloom.Hyperspace(spark).create_index(
            spark.read.options(**READ).parquet(tables["encrypted"]), BFIndexConfig("ids", ["id"])
        )
    assert not system_path.exists()


def test_an_unencrypted_column_of_a_plaintext_footer_table_is_indexed_and_prunes(spark, system_path, tables):
    hs = hsbloom.Hyperspace(spark)
    df = spark.read.options(**READ).parquet(tables["plaintext"])
    hs.create_index(df, BFIndexConfig("ids", ["id"]))
    assert hs.index("ids").num_files == 2
    lookups = ["id = 5", "id = 33", "id IN (3, 21)", "id = 1000", "id > 30"]
    try:
        assert outcomes(spark, df, lookups, enabled=True) == outcomes(spark, df, lookups, enabled=False)
        hsbloom.enable(spark)
        assert files_read(df.where("id = 5")) == 1
        assert df.where("id = 5").select("ssn").first().ssn == f"{5 * 7919:09d}"  # decrypted as usual
    finally:
        hsbloom.disable(spark)


def test_a_refresh_over_an_appended_encrypted_file_is_refused_in_every_mode(spark, system_path, tmp_path):
    hs = hsbloom.Hyperspace(spark)
    path = str(tmp_path / "people")
    people(spark, 0, 40).write.parquet(path)
    hs.create_index(spark.read.options(**READ).parquet(path), BFIndexConfig("grows", ["ssn"]))
    before = everything_under(system_path / "grows")
    version = hs.index("grows").data_version
    people(spark, 40, 42).coalesce(1).write.mode("append").options(**encrypting(True)).parquet(path)
    # The log never holds the key options the index was read with (docs/security.md#what-the-log-holds): a refresh
    # reads with the session's settings, where keys belong.
    key_list = READ["parquet.encryption.key.list"].encode()
    assert not any(key_list in f.read_bytes() or b"parquet.encryption.key.list" in f.read_bytes()
                   for f in (system_path / "grows").rglob("*") if f.is_file())
    with session_settings(spark, READ):
        for mode in ("quick", "incremental", "full"):
            with pytest.raises(EncryptedSourceError, match="cannot refresh index 'grows': column 'ssn' is encrypted"):
                hs.refresh_index("grows", mode=mode)
    with session_settings(spark, {**READ, settings.INDEX_ENCRYPTION: "columns"}), pytest.raises(
            EncryptedSourceError, match="cannot refresh index 'grows': column 'ssn' with master key k1 would be encrypted"):
        hs.refresh_index("grows", mode="incremental")
    assert everything_under(system_path / "grows") == before  # no log entry, no data
    assert (hs.index("grows").state.value, hs.index("grows").data_version) == ("ACTIVE", version)


@contextmanager
def session_settings(spark, settings: dict[str, str]) -> Iterator[None]:
    """`settings` on the shared session for a while (Delta writes and reads Parquet with the session's)."""
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key in settings:
            spark.conf.unset(key)


def test_an_encrypted_delta_table_is_refused(spark, system_path, tmp_path):
    path = str(tmp_path / "delta")
    with session_settings(spark, encrypting(plaintext_footer=True)):
        people(spark, 0, 40).write.format("delta").save(path)
    with session_settings(spark, READ), pytest.raises(EncryptedSourceError, match="column 'ssn' is encrypted"):
        hsbloom.Hyperspace(spark).create_index(spark.read.format("delta").load(path), BFIndexConfig("dssn", ["ssn"]))
    assert not system_path.exists()


def test_without_keys_a_build_over_an_encrypted_column_fails_and_keeps_nothing(spark, system_path, tables):
    """Why the check reads nothing when the read has no crypto factory: nothing encrypted can be read then."""
    with pytest.raises(IndexBuildError, match="so it was not created"):
        hsbloom.Hyperspace(spark).create_index(spark.read.parquet(tables["plaintext"]), BFIndexConfig("ssns", ["ssn"]))
    assert [p for p in everything_under(system_path / "ssns") if p.startswith("v__=")] == []


@pytest.mark.parametrize("footer", ["plaintext", "encrypted"])
def test_with_index_encryption_the_keys_are_read_and_named_and_nothing_is_written(spark, system_path, tables, footer):
    """Both footer modes: the column's master key from its key material (an encrypted footer decrypted first)."""
    with session_settings(spark, {settings.INDEX_ENCRYPTION: "columns"}), pytest.raises(EncryptedSourceError) as refused:
        hsbloom.Hyperspace(spark).create_index(spark.read.options(**READ).parquet(tables[footer]),
                                               BFIndexConfig("ssns", ["ssn"]))
    message = str(refused.value)
    assert message.startswith("cannot create index 'ssns': column 'ssn' with master key k1"), message
    assert ("footers with master key k2" in message) == (footer == "encrypted")
    assert f"would be encrypted in the index ({settings.INDEX_ENCRYPTION}=columns)" in message
    assert "does not store an encrypted index yet" in message and message.endswith("Nothing was written")
    assert not system_path.exists()


def test_with_index_encryption_files_that_disagree_on_a_columns_key_are_refused(spark, system_path, tmp_path):
    """Never a guessed key; the table's unencrypted columns are still indexed."""
    path = str(tmp_path / "two_keys")
    people(spark, 0, 20).coalesce(1).write.options(**encrypting(True)).parquet(path)
    under_k2 = {**encrypting(True), "parquet.encryption.column.keys": "k2:ssn"}
    people(spark, 20, 40).coalesce(1).write.mode("append").options(**under_k2).parquet(path)
    hs = hsbloom.Hyperspace(spark)
    df = spark.read.options(**READ).parquet(path)
    with session_settings(spark, {settings.INDEX_ENCRYPTION: "columns"}):
        with pytest.raises(EncryptedSourceError, match=rf"cannot create index 'ssns': index encryption "
                           rf"\({settings.INDEX_ENCRYPTION}=columns\) cannot be used: column 'ssn' is encrypted "
                           r"with different keys: k[12] \(in .*\) and k[12] \(in .*\)\. Nothing was written"):
            hs.create_index(df, BFIndexConfig("ssns", ["ssn"]))
        assert not system_path.exists()
        hs.create_index(df, BFIndexConfig("ids", ["id"]))
    assert hs.index("ids").num_files == 2


def test_an_unknown_index_encryption_value_fails_the_create_naming_the_choices(spark, system_path, tables):
    with session_settings(spark, {settings.INDEX_ENCRYPTION: "all"}), pytest.raises(
            InvalidConfigError, match=f"{settings.INDEX_ENCRYPTION} must be one of off, columns; got 'all'"):
        hsbloom.Hyperspace(spark).create_index(spark.read.parquet(tables["plaintext"]), BFIndexConfig("ids", ["id"]))
    assert not system_path.exists()
