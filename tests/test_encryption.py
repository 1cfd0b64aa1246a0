"""Sources encrypted with Parquet modular encryption (docs/security.md#encrypted-columns).

An index stores each file's filter and counts in plaintext, so create and every refresh refuse, before writing
anything, an indexed column that is encrypted in any file and any file whose footer is encrypted. With
spark.hsbloom.index.encryption=columns they read the files' master keys first, and refuse, naming them, files
that disagree, and store the encrypted columns' rows sealed under their keys (docs/design/encryption.md). The files are
real encrypted Parquet, written by Spark through parquet-java's PropertiesDrivenCryptoFactory with the test KMS
client (jvm/testkms, on the session's classpath: tests/conftest.py).
"""

from __future__ import annotations

import base64
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from py4j.java_gateway import JavaClass

import hsbloom
from hsbloom import BFIndexConfig, jar, settings
from hsbloom.errors import EncryptedSourceError, IndexBuildError, InvalidConfigError
from hsbloom.explain import explain_string, files_read, row_group_counts
from jvm_classes import jvm_class
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
    kms = jvm_class(spark, "test_kms")
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
    assert f"index encryption ({settings.INDEX_ENCRYPTION}=columns) indexes it with its filters" in message
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
    hs.create_index(spark.read.options(**READ).parquet(path), BFIndexConfig("grows", ["ssn"], global_filter=True))
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
    # With index encryption on, the appended file would seal ssn beside its plaintext rows: a full refresh seals it.
    with session_settings(spark, {**READ, settings.INDEX_ENCRYPTION: "columns"}), pytest.raises(
            EncryptedSourceError, match="cannot refresh index 'grows' incrementally: column 'ssn' is encrypted in "
                                        r"appended files \(master key k1\), but the index holds it in plaintext.* "
                                        r"Refresh it in full mode, which seals the column whole.*Nothing was written"):
        hs.refresh_index("grows", mode="incremental")
    assert everything_under(system_path / "grows") == before  # no log entry, no data
    assert (hs.index("grows").state.value, hs.index("grows").data_version) == ("ACTIVE", version)
    # The fix the refusal names: a full refresh seals ssn whole (the plaintext files' values too), its counts out
    # of the log, and none of its values in any plaintext byte of the new version; with keys it prunes as before.
    assert "ssn" in [c.column for c in hs.index("grows").columns]
    with session_settings(spark, {**READ, settings.INDEX_ENCRYPTION: "columns"}):
        hs.refresh_index("grows", mode="full")
    assert "ssn" not in [c.column for c in hs.index("grows").columns] and hs.index("grows").num_files == 3
    new_version = system_path / "grows" / f"v__={hs.index('grows').data_version}"
    readable, sealed_files = readable_without_keys(new_version)
    assert {f.parent.name for f in sealed_files} == {"sealed", "sealed_global"}
    assert all(r.get("column") != "ssn" for f in readable for r in pq_rows(f))
    values = [f"{n * 7919:09d}" for n in range(42)]
    assert not [f for f in new_version.rglob("*") if f.is_file() and any(v.encode() in f.read_bytes() for v in values)]
    blocks = [f for f in new_version.rglob("*") if f.parent.name == "blocks" and not f.name.startswith(".")]
    assert {hit for f in blocks for hit in sbbf_hits(f.read_bytes()[:-8], values)} == set()
    df = spark.read.parquet(path)
    lookups = [f"ssn = '{values[41]}'", f"ssn = '{values[3]}'", "ssn = 'absent'", "ssn IN ('', '000007919')"]
    with session_settings(spark, READ):
        try:
            assert outcomes(spark, df, lookups, enabled=True) == outcomes(spark, df, lookups, enabled=False)
            hsbloom.enable(spark)
            assert files_read(df.where(lookups[0])) == 1 and files_read(df.where(lookups[2])) == 0
        finally:
            hsbloom.disable(spark)


def pq_rows(path: Path) -> list[dict]:
    import pyarrow.parquet as pq
    return pq.read_table(path).to_pylist()


def index_files(path: Path) -> dict[str, bytes]:
    """Every file under `path` (the log's entries, the data directories) with its bytes."""
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_without_keys_an_incremental_refresh_of_a_sealed_index_is_refused_before_writing(spark, system_path, tmp_path):
    """A session without the keys (no crypto factory) can neither read the appended files' encrypted column nor
    seal their rows, nor read the sealed global filter's size, nor copy the sealed rows when compacting: refused
    before the operation begins, with and without a global filter, naming the fix; the index's log and files are
    byte for byte the same afterwards."""
    path = tmp_path / "people"
    odd_people(spark).write.options(**encrypting(True)).parquet(str(path))
    first_files = sorted(path.glob("*.parquet"))
    hs = hsbloom.Hyperspace(spark)
    with session_settings(spark, {**READ, settings.INDEX_ENCRYPTION: "columns"}):
        hs.create_index(spark.read.parquet(str(path)), BFIndexConfig("with_global", ["ssn"], global_filter=True))
        hs.create_index(spark.read.parquet(str(path)), BFIndexConfig("files_only", ["ssn"], global_filter=False))
    spark.createDataFrame([(100, "zzz")], "id long, ssn string").coalesce(1).write.mode("append") \
        .options(**encrypting(True)).parquet(str(path))
    before = index_files(system_path)
    log_ids = {name: hs.index(name).log_id for name in ("with_global", "files_only")}
    fix = (r"give the session the table's Parquet encryption settings.*, or refresh it in full mode\. "
           "Nothing was written")
    for name in log_ids:  # appended files: their rows cannot be sealed
        with pytest.raises(EncryptedSourceError, match=f"cannot refresh index '{name}' incrementally: it holds "
                           f"column 'ssn' sealed under the source's keys .* without a crypto factory .*{fix}"):
            hs.refresh_index(name, mode="incremental")
    # Deleted files only, more than are kept: the refresh compacts, which copies the sealed rows.
    for f in set(path.glob("*.parquet")) - set(first_files[:1]):
        f.unlink()
    for name in log_ids:
        with pytest.raises(EncryptedSourceError, match=f"cannot refresh index '{name}' incrementally: its data "
                           f"directories need compacting, which copies its sealed rows .*{fix}"):
            hs.refresh_index(name, mode="incremental")
    assert index_files(system_path) == before
    assert {name: hs.index(name).log_id for name in log_ids} == log_ids
    assert {hs.index(name).state.value for name in log_ids} == {"ACTIVE"}


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


def test_substring_filters_of_an_encrypted_source_are_refused_even_with_index_encryption(spark, system_path, tables):
    """Substring filters are not sealed: their grams would reveal an encrypted column (docs/substring.md)."""
    df = spark.read.options(**READ).parquet(tables["plaintext"])
    with session_settings(spark, {settings.INDEX_ENCRYPTION: "columns"}), pytest.raises(
            EncryptedSourceError, match="substring_columns: this source is read with a Parquet crypto factory"):
        hsbloom.Hyperspace(spark).create_index(df, BFIndexConfig("ssns", ["id"], substring_columns=["ssn"]))
    assert not system_path.exists()


def test_without_keys_a_build_over_an_encrypted_column_fails_and_keeps_nothing(spark, system_path, tables):
    """Why the check reads nothing when the read has no crypto factory: nothing encrypted can be read then."""
    with pytest.raises(IndexBuildError, match="so it was not created"):
        hsbloom.Hyperspace(spark).create_index(spark.read.parquet(tables["plaintext"]), BFIndexConfig("ssns", ["ssn"]))
    assert [p for p in everything_under(system_path / "ssns") if p.startswith("v__=")] == []


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


# --- Encrypted indexes (spark.hsbloom.index.encryption=columns): sealed rows, docs/design/encryption.md ---

SSNS = [None, "", "ünï", "日本語", "000000000"] + [f"{n * 7919:09d}" for n in range(1, 35)]  # nulls, '', unicode
SEALED_PREDICATES = ["ssn = '000007919'", "ssn = ''", "ssn = 'ünï'", "ssn = '日本語'", "ssn IS NULL",
                     "ssn IS NOT NULL", "ssn IN ('000015838', 'absent', '')", "ssn = 'absent'", "ssn <=> NULL",
                     "ssn = '000007919' OR id = 30", "ssn > '0'"]
NO_KEYS_REASON = "column 'ssn' is encrypted and this session cannot decrypt its filters: all files kept"
SMALL_ROW_GROUPS = {"parquet.block.row.count.limit": "3"}  # several row groups per file, for zones


def odd_people(spark):
    """39 rows in 4 files, ssn with a null, an empty string and unicode in the first file."""
    rows = [(i, s) for i, s in enumerate(SSNS)]
    return spark.createDataFrame(rows, "id long, ssn string").repartition(4, "id").sortWithinPartitions("id")


@pytest.fixture(scope="module")
def sealed(spark, tmp_path_factory, module_system_path) -> dict[str, str]:
    """Per footer mode, a table with ssn encrypted (row groups of 3 rows) and an index of ssn with zones and a global
    filter, sealed under k1 (keys from the read options)."""
    root = tmp_path_factory.mktemp("sealed")
    paths = {}
    hs = hsbloom.Hyperspace(spark)
    for footer in ("plaintext", "encrypted"):
        paths[footer] = str(root / footer)
        odd_people(spark).write.options(**encrypting(footer == "plaintext"), **SMALL_ROW_GROUPS).parquet(paths[footer])
        with session_settings(spark, {settings.INDEX_ENCRYPTION: "columns"}):
            hs.create_index(spark.read.options(**READ).parquet(paths[footer]),
                            BFIndexConfig(f"sealed_{footer}", ["ssn"], global_filter=True, granularity="row_group"))
    return paths


@pytest.mark.parametrize("footer", ["plaintext", "encrypted"])
def test_a_sealed_index_prunes_with_keys_and_keeps_every_file_without(spark, sealed, module_system_path, footer):
    df = spark.read.options(**READ).parquet(sealed[footer])
    hs = hsbloom.Hyperspace(spark)
    assert hs.index(f"sealed_{footer}").num_files == 4
    expected = outcomes(spark, df, SEALED_PREDICATES, enabled=False)
    assert [len(ids) for ids in expected[:5]] == [1, 1, 1, 1, 1]  # each value is in the table once
    catalog = jar.jar_class(spark, "index_catalog")
    try:
        with session_settings(spark, READ):  # the session holds the keys: the sealed rows are decrypted
            assert outcomes(spark, df, SEALED_PREDICATES, enabled=True) == expected
            hsbloom.enable(spark)
            loads = catalog.loads()
            assert files_read(df.where("ssn = '000007919'")) == 1
            assert files_read(df.where("ssn = 'ünï'")) == 1
            assert files_read(df.where("ssn = 'absent'")) == 0
            assert catalog.loads() == loads  # loaded (decrypted) once per version and crypto settings, then cached
        # The source is read with its options, but the session has no crypto factory: the index cannot be. Its
        # own load, not the decrypted filters cached above (keyed by the crypto settings).
        loads = catalog.loads()
        assert outcomes(spark, df, SEALED_PREDICATES, enabled=True) == expected
        hsbloom.enable(spark)
        assert files_read(df.where("ssn = '000007919'")) == 4
        assert catalog.loads() == loads + 1
        assert NO_KEYS_REASON in explain_string(df.where("ssn = 'absent'"))
    finally:
        hsbloom.disable(spark)


@pytest.mark.parametrize("footer", ["plaintext", "encrypted"])
def test_a_sealed_index_prunes_row_groups_with_keys_and_keeps_them_all_without(spark, sealed, footer):
    """The zones of ssn are sealed too (sealed_zones/): with keys the kept file's other row groups are skipped (the
    rows are the same: the test above runs its predicates on this zoned index); without keys every row group."""
    df = spark.read.options(**READ).parquet(sealed[footer])
    query = lambda: df.where("ssn = '000007919'")  # noqa: E731
    try:
        hsbloom.enable(spark)
        with session_settings(spark, READ):
            before, pruned = row_group_counts(query())
            assert before >= 3 and pruned == before - 1, (before, pruned)
            assert f"row groups of files with zones: {before} -> 1" in explain_string(query())
        assert row_group_counts(query()) == (None, None)
        assert NO_KEYS_REASON in explain_string(query())
    finally:
        hsbloom.disable(spark)



PROBES = ["000007919", "", None, "ünï", "日本語", "absent", "000015838", None, "zzz", "000000000"]
NO_KEYS_JOIN = "column 'ssn' is encrypted and this session cannot decrypt its global filter"


@pytest.mark.parametrize("footer", ["plaintext", "encrypted"])
def test_a_join_gets_the_sealed_global_filter_with_keys_and_not_without(spark, sealed, tmp_path, footer):
    """The sealed global filter of ssn (sealed_global/) is injected on the other side of a join when the session
    holds the keys (the driver decrypts it), with the same rows as hsbloom off for = and <=> (nulls, '', unicode);
    without keys it is not, saying why, and the rows are the same. The decrypted copy the keyed session loaded is
    cached under its crypto settings: the session without them does not get it."""
    probes = str(tmp_path / "probes")
    spark.createDataFrame([(i, s) for i, s in enumerate(PROBES)], "pid long, ssn string").coalesce(1) \
        .write.parquet(probes)
    encrypted = spark.read.options(**READ).parquet(sealed[footer])

    def joined():
        p, e = spark.read.parquet(probes).alias("p"), encrypted.alias("e")
        eq = p.join(e, p.ssn == e.ssn).selectExpr("'=' AS op", "pid", "id")
        null_safe = p.join(e, p.ssn.eqNullSafe(e.ssn)).selectExpr("'<=>' AS op", "pid", "id")
        return eq.unionAll(null_safe)

    def rows(enabled: bool) -> list[tuple]:
        (hsbloom.enable if enabled else hsbloom.disable)(spark)
        return sorted(tuple(r) for r in joined().collect())

    injected = f"global filter of sealed_{footer}.ssn on "
    shuffled = {"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.hsbloom.join.costModel": "false"}
    try:
        with session_settings(spark, shuffled):
            expected = rows(False)
            assert {(op, pid) for op, pid, _ in expected} >= {("=", 0), ("=", 1), ("<=>", 2), ("<=>", 7)}
            with session_settings(spark, READ):
                assert rows(True) == expected
                plan = jar.java_dataframe(joined()).queryExecution().executedPlan().toString()
                filters = [line for line in plan.splitlines() if "- Filter " in line and "hsbloom_join_filter(" in line]
                assert len(filters) == 2, plan  # one per join, on the probes' side
                considered = explain_string(joined()).replace("`", "")
                assert considered.count(": injected:") == 2 and injected in considered, considered
            assert rows(True) == expected  # no keys in the session: no filter, every row
            considered = explain_string(joined()).replace("`", "")
            assert "hsbloom_join_filter" not in jar.java_dataframe(joined()).queryExecution().executedPlan().toString()
            assert f"{injected}" in considered and f"skipped: {NO_KEYS_JOIN}" in considered, considered
    finally:
        hsbloom.disable(spark)


def test_the_spark_free_reader_keeps_every_file_for_an_encrypted_column(sealed, module_system_path):
    """hsbloom.readers (docs/readers.md) does not decrypt sealed/ rows: their column's conditions keep every file,
    with the reason. (A table with encrypted footers cannot be listed by pyarrow without keys at all.)"""
    import hsbloom.readers as readers

    index = readers.open_index(str(module_system_path / "sealed_plaintext"))
    assert index.unusable is None and not index.damage
    files = sorted(index.list_source().files, key=lambda f: f.path)
    assert len(files) == 4
    for predicate in (readers.eq("ssn", "000007919"), readers.eq("ssn", "absent"), readers.is_null("ssn"),
                      readers.isin("ssn", ["", "ünï"])):
        pruned = index.prune(predicate)
        assert sorted(pruned.files) == [f.path for f in files] and not pruned.skipped
        assert any("column ssn is encrypted in the index" in r for r in pruned.reasons), pruned.explain()

def readable_without_keys(path: Path) -> tuple[list[Path], list[Path]]:
    """The Parquet files under `path` pyarrow reads without keys, and those it cannot."""
    import pyarrow.parquet as pq
    readable, sealed_files = [], []
    for f in sorted(path.rglob("*.parquet")):
        try:
            pq.read_table(f)
            readable.append(f)
        except Exception:  # noqa: BLE001 - pyarrow raises OSError/ArrowException on encrypted parts
            sealed_files.append(f)
    return readable, sealed_files


@pytest.mark.parametrize("footer", ["plaintext", "encrypted"])
def test_without_keys_the_index_confirms_no_value_of_the_encrypted_column(sealed, module_system_path, footer):
    """A dictionary attack: 10,000 candidates, the true values among them, against every byte of the index."""
    import json

    import pyarrow.parquet as pq
    index_dir = module_system_path / f"sealed_{footer}"
    true_values = [s for s in SSNS if s is not None]
    candidates = true_values + [f"{n:09d}" for n in range(10_000 - len(true_values))]
    readable, sealed_files = readable_without_keys(index_dir)
    assert {f.parent.name for f in sealed_files} == {"sealed", "sealed_zones", "sealed_global"}
    assert not any(f.parent.name.startswith("sealed") for f in readable)
    assert any(f.parent.name == "global" for f in readable)  # the plaintext global table: no chunk of ssn (below)
    assert any(f.parent.name == "zones" for f in readable)  # the plaintext zone table: no row of ssn (below)
    for f in readable:  # the plaintext tables: no row, no count of ssn
        table = pq.read_table(f).to_pylist()
        assert all(r.get("column") != "ssn" for r in table), f
        assert all(r.get("num_rows", 0) == 0 for r in table if r.get("column") == ""), f
    everything = [f for f in index_dir.rglob("*") if f.is_file()]
    for f in everything:
        data = f.read_bytes()
        assert not any(c.encode() in data for c in candidates if len(c) >= 3), f  # no value in plaintext
        if f.parent.name == "_hsbloom_log" or f.suffix == ".json" or "log" in f.parent.name:
            for entry in [line for line in data.decode("utf-8", "replace").splitlines() if line.startswith("{")]:
                summary = json.loads(entry).get("summary") or {}
                assert "ssn" not in (summary.get("columns") or {}), f
                source = json.loads(entry).get("source") or {}
                if footer == "encrypted":  # the footers hide the schema: of it, only the column the user named
                    assert source["schema"] == {"ssn": "string"} and source["schema_hidden"] is True, f
                    assert "bigint" not in entry and '"id"' not in json.dumps(source), f
                    assert summary.get("num_rows", 0) == 0, f
                else:  # a plaintext footer shows the schema to anyone
                    assert source["schema"] == {"id": "bigint", "ssn": "string"} and "schema_hidden" not in source
    # The filters readable without keys are in the side files' blocks: probe every 32-byte window of each (any
    # offset a 4 bytes) as an SBBF block, as an attacker who ignores where blocks start would: no candidate is in
    # any. Each file on its own, without Hadoop's .crc companions: a window across two files' checksums is 32
    # random bytes, which hold a 10,000-candidate list's value by chance (each candidate with odds 2^-8).
    blocks = [f for f in everything if f.parent.name == "blocks" and not f.name.startswith(".")]
    assert blocks and all(len(f.read_bytes()) % 32 == 8 for f in blocks)  # one stripe: blocks, then its checksum
    assert {hit for f in blocks for hit in sbbf_hits(f.read_bytes()[:-8], candidates)} == set()


SALT = np.array([0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31],
                dtype=np.uint64)


def sbbf_hits(data: bytes, candidates: list[str]) -> set[str]:
    """The candidates some 32-byte window of `data` holds as an SBBF block would (Parquet's split-block check)."""
    import xxhash
    keys = np.array([xxhash.xxh64_intdigest(c.encode()) & 0xFFFFFFFF for c in candidates], dtype=np.uint64)
    masks = (np.uint64(1) << (((keys[:, None] * SALT[None, :]) & np.uint64(0xFFFFFFFF)) >> np.uint64(27)))
    masks = masks.astype(np.uint32)
    hit = np.zeros(len(candidates), dtype=bool)
    for at in range(0, len(data) - 31, 4):
        words = np.frombuffer(data, dtype="<u4", count=8, offset=at)
        if words.all():
            hit |= ((masks & words[None, :]) == masks).all(axis=1)
    return {c for c, h in zip(candidates, hit) if h}


def test_a_sealed_index_refreshes_an_appended_file_compacts_and_verifies(spark, system_path, tmp_path):
    """Incremental refresh seals the appended file's rows, zones and global filter (at the index's size, read with
    keys) in the new data directory; both directories are read (verify reads the sealed global filters too). Encrypted
    footers: the refreshed log still hides the schema. Compaction seals the kept rows and the OR-ed global filter
    again (with keys)."""
    path = str(tmp_path / "grows")
    odd_people(spark).write.options(**encrypting(False)).parquet(path)
    first_files = sorted(Path(path).glob("*.parquet"))
    hs = hsbloom.Hyperspace(spark)

    def same_rows_one_file_and_healthy() -> None:
        """With keys: the same rows on and off, the appended value in one file, verify healthy."""
        df = spark.read.parquet(path)
        predicates = SEALED_PREDICATES + ["ssn = 'zzz'"]
        try:
            assert outcomes(spark, df, predicates, enabled=True) == outcomes(spark, df, predicates, enabled=False)
            # A join gets the OR of the directories' sealed global filters: the appended value passes it.
            with session_settings(spark, {"spark.sql.autoBroadcastJoinThreshold": "-1",
                                          "spark.hsbloom.join.costModel": "false"}):
                probe = spark.createDataFrame([("zzz",), ("absent",), ("000007919",), ("",)], "ssn string")
                ids = lambda: sorted(r.id for r in probe.join(df, "ssn").select("id").collect())  # noqa: E731
                expected = ids()
                hsbloom.enable(spark)
                assert ids() == expected and 100 in expected
                plan = jar.java_dataframe(probe.join(df, "ssn")).queryExecution().executedPlan()
                assert "hsbloom_join_filter" in plan.toString()
            assert files_read(df.where("ssn = 'zzz'")) == 1
        finally:
            hsbloom.disable(spark)
        assert hs.verify_index("grows").healthy

    with session_settings(spark, {**READ, settings.INDEX_ENCRYPTION: "columns"}):
        hs.create_index(spark.read.parquet(path), BFIndexConfig("grows", ["ssn"], global_filter=True, granularity="row_group"))
        spark.createDataFrame([(100, "zzz"), (101, None)], "id long, ssn string").coalesce(1).write.mode(
            "append").options(**encrypting(False)).parquet(path)
        hs.refresh_index("grows", mode="incremental")
        assert hs.index("grows").num_files == 5
        assert hs.index("grows").source.schema == {"ssn": "string"}  # the refreshed entry hides the schema too
        for sealed_table in ("sealed", "sealed_zones", "sealed_global"):  # at least one part per data directory
            assert len({p.parent.parent for p in (system_path / "grows").glob(f"v__=*/{sealed_table}/*.parquet")}) == 2
        same_rows_one_file_and_healthy()
    unkeyed = hs.verify_index("grows")  # verify reads sealed/ too: without keys it cannot
    assert not unkeyed.healthy and "sealed table (the encrypted columns' filters) cannot be read" in str(unkeyed)
    # sealed_zones/ without keys: said, never a problem (a query keeps every row group then); with keys, read whole.
    assert [n for n in unkeyed.not_checked if "sealed zone table" in n and "no keys" in n] and not any(
        "sealed zone" in p.problem for p in unkeyed.problems), unkeyed
    zone_part = sorted((system_path / "grows").glob("v__=*/sealed_zones/*.parquet"))[0]
    original = zone_part.read_bytes()
    zone_part.write_bytes(original[:len(original) // 2] + bytes([original[len(original) // 2] ^ 1]) +
                          original[len(original) // 2 + 1:])
    try:
        with session_settings(spark, READ):
            damaged = hs.verify_index("grows")
    finally:
        zone_part.write_bytes(original)
    assert [p.problem for p in damaged.problems if p.file.endswith(zone_part.name)] and not damaged.not_checked, damaged
    assert all("sealed zone table part cannot be read with this session's keys" in p.problem
               for p in damaged.problems), damaged
    # A deleted file with at most one data directory allowed: the refresh compacts, copying the kept sealed rows.
    first_files[0].unlink()
    one_part = {**READ, "spark.hsbloom.internal.refresh.maxReferredParts": "1"}
    with session_settings(spark, one_part), pytest.raises(EncryptedSourceError, match=(
            "cannot refresh index 'grows' incrementally: its data directories need compacting, which copies its "
            r"sealed rows .* refresh it in full mode\. Nothing was written")):
        hs.refresh_index("grows", mode="incremental")  # index encryption off: the rows cannot be sealed again
    with session_settings(spark, {**one_part, settings.INDEX_ENCRYPTION: "columns"}):
        hs.refresh_index("grows", mode="incremental")
        assert hs.index("grows").num_files == 4 and len(hs.index("grows").data_paths) == 1
        version = system_path / "grows" / f"v__={hs.index('grows').data_version}"
        for sealed_table in ("sealed", "sealed_global"):  # the global filters OR-ed, sealed again
            assert list(version.glob(f"{sealed_table}/*.parquet"))
            assert readable_without_keys(version / sealed_table)[0] == []
        same_rows_one_file_and_healthy()
    # Delete and restore keep sealed/ with its data directories: a restored index prunes with keys again.
    hs.delete_index("grows")
    hs.restore_index("grows")
    with session_settings(spark, READ):
        try:
            hsbloom.enable(spark)
            assert files_read(spark.read.parquet(path).where("ssn = 'zzz'")) == 1
        finally:
            hsbloom.disable(spark)
    hs.delete_index("grows")
    hs.vacuum_index("grows")  # every data directory, sealed/ with it
    assert not list((system_path / "grows").glob("v__=*")) and not list(system_path.rglob("sealed"))


@pytest.mark.parametrize("footer", ["plaintext", "encrypted"])
def test_a_sealed_index_of_an_encrypted_delta_table_prunes(spark, system_path, tmp_path, footer):
    """Delta reads Parquet with the session's settings only: with keys it prunes, without them (no factory on the
    session) the plan keeps every file, saying why."""
    path = str(tmp_path / "delta")
    with session_settings(spark, encrypting(plaintext_footer=footer == "plaintext")):
        odd_people(spark).write.format("delta").save(path)
    assert {p.read_bytes()[-4:] for p in Path(path).glob("*.parquet")} == {b"PAR1" if footer == "plaintext" else b"PARE"}
    hs = hsbloom.Hyperspace(spark)
    with session_settings(spark, {**READ, settings.INDEX_ENCRYPTION: "columns"}):
        df = spark.read.format("delta").load(path)
        hs.create_index(df, BFIndexConfig("dssn", ["ssn"], global_filter=False))
        try:
            assert outcomes(spark, df, SEALED_PREDICATES, enabled=True) == outcomes(spark, df, SEALED_PREDICATES,
                                                                                     enabled=False)
            hsbloom.enable(spark)
            assert files_read(df.where("ssn = '日本語'")) == 1
        finally:
            hsbloom.disable(spark)
    assert set(hs.index("dssn").source.schema) == ({"ssn"} if footer == "encrypted" else {"id", "ssn"})
    try:  # no keys: planning (the Delta log is plaintext) keeps every file of the encrypted column
        hsbloom.enable(spark)
        assert NO_KEYS_REASON in explain_string(spark.read.format("delta").load(path).where("ssn = 'absent'"))
    finally:
        hsbloom.disable(spark)
