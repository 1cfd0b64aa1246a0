"""The readers and substring conditions: hsbloom.readers.substring (LIKE patterns, byte n-grams) and the substring
predicates of hsbloom.readers (docs/design/substring.md, docs/design/readers.md).

Against tests/vectors/substring_vectors.json, which the jar's SubstringVectorsSuite reads too, and against Spark's
own LIKE and ILIKE: over random values and patterns built to break a substring filter (wildcards, both escape
characters, multi-byte and 4-byte characters, a combining accent, characters whose lower case is longer), every
row Spark matches holds each run the reader reads and each gram those runs require, and the reader refuses no
pattern Spark reads.

Then the readers' substring predicates (contains, startswith, endswith, like) on an index the jar built with
substring filters and zones: 300 random predicates keep every file holding a row Spark's own evaluation selects,
and the files the Spark rule keeps on the same index; needles read their one file; a condition no substring
filter answers keeps every file, with its reason; a kept file's row groups are read as by the Spark rule.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F

import hsbloom
from hsbloom.errors import InvalidArgumentError
from hsbloom.readers import and_, contains, endswith, eq, ilike, isin, like, open_index, or_, startswith
from hsbloom.readers.log import UnusableIndex, parse
from hsbloom.readers.predicates import And, Contains, EndsWith, Eq, ILike, In, Like, Or, StartsWith
from hsbloom.readers.substring import gram_hashes, like_runs, literal_runs, probed_grams, required_grams

VECTORS = json.loads((Path(__file__).resolve().parent / "vectors" / "substring_vectors.json").read_text())
PIECES = ["a", "b", "ab", "A", "%", "_", "\\", "!", "\u00e9", "e\u0301", "\u4e2d", "\U0001F600", "\u0130", "\u212a",
          "k", "\u00df", "SS", " "]


def _value(v: dict) -> bytes:
    return bytes.fromhex(v["hex"]) if "hex" in v else v["utf8"].encode("utf-8")


@pytest.mark.parametrize("case", VECTORS["runs"], ids=lambda c: repr(c["pattern"]))
def test_a_pattern_is_read_into_the_runs_of_the_vectors(case):
    assert like_runs(case["pattern"], case["escape"]) == case["runs"]


@pytest.mark.parametrize("case", VECTORS["grams"], ids=lambda c: f"{c['value']}-{c['n']}")
def test_a_value_has_the_grams_of_the_vectors(case):
    assert [f"{int(h):016x}" for h in gram_hashes(_value(case["value"]), case["n"])] == case["grams"]


@pytest.mark.parametrize("case", VECTORS["required"], ids=lambda c: f"{c['runs']}-{c['n']}")
def test_runs_require_the_grams_of_the_vectors(case):
    found = required_grams(case["runs"], case["n"])
    assert (None if found is None else sorted(f"{h:016x}" for h in found)) == case["grams"]


def test_literals_bad_escapes_and_gram_lengths():
    assert literal_runs("ab%_") == ["ab%_"] and literal_runs("") == [] and literal_runs("\udc00") is None
    assert like_runs("a\ud800b%") is None  # a lone surrogate has no UTF-8 form
    with pytest.raises(InvalidArgumentError, match="one character"):
        like_runs("abc", "!!")
    for n in (1, 9, 2.0, True):
        with pytest.raises(InvalidArgumentError, match="a gram is 2 to 8 bytes"):
            gram_hashes(b"abc", n)
    assert issubclass(InvalidArgumentError, ValueError)


def _random_text(rnd: random.Random, most: int) -> str:
    return "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, most)))


def test_whatever_sparks_like_and_ilike_match_holds_the_runs_and_grams_the_reader_reads(spark):
    rnd = random.Random(54)
    cases: dict[str, list] = {escape: [] for escape in ("\\", "!", "%")}
    refused = []
    for _ in range(6000):
        value = _random_text(rnd, 6)
        start = rnd.randint(0, len(value))
        cut = value[start:rnd.randint(start, len(value))]
        pattern = _random_text(rnd, 4) if rnd.random() < 0.5 else "%" + cut + rnd.choice(["%", "_", ""])
        escape = rnd.choice(list(cases))
        # A pattern Spark refuses fails its whole query: those the reader refuses are asked one at a time below.
        (cases[escape] if like_runs(pattern, escape) is not None else refused).append((value, pattern, escape))
    assert len(refused) > 100
    for value, pattern, escape in refused[:20]:  # Spark refuses them too: the reader refuses no pattern Spark reads
        escaped = escape.replace("\\", "\\\\")
        with pytest.raises(Exception, match="(?i)escape"):
            spark.createDataFrame([Row(value=value, pattern=pattern)]).selectExpr(
                f"value LIKE pattern ESCAPE '{escaped}'").collect()
    matched = 0
    for escape, rows in cases.items():
        escaped = escape.replace("\\", "\\\\")
        results = spark.createDataFrame([Row(value=v, pattern=p) for v, p, _ in rows]).selectExpr(
            "value", "pattern", f"value LIKE pattern ESCAPE '{escaped}' AS likes", "lower(value) AS lower_value",
            "lower(pattern) AS lower_pattern", f"value ILIKE pattern ESCAPE '{escaped}' AS ilikes").collect()
        for r in results:
            for matches, value, pattern in ((r.likes, r.value, r.pattern), (r.ilikes, r.lower_value, r.lower_pattern)):
                if not matches:
                    continue
                matched += 1
                runs = like_runs(pattern, escape)
                assert runs is not None, (value, pattern, escape)
                assert all(run in value for run in runs), (value, pattern, escape, runs)
                for n in (2, 3, 4):
                    required = required_grams(runs, n)
                    held = {int(h) for h in gram_hashes(value.encode("utf-8"), n)}
                    assert required is None or required <= held, (value, pattern, escape, n)
    assert matched > 1500


# --- The readers' substring predicates on an index the jar built -------------------------------------------------
#
# Eight pyarrow-written files of three row groups (zones): `msg` has a substring filter only, `tag` a value filter
# and a substring filter, `note` and `id` value filters only. Each of files 0-5 holds a needle (a trace id in a
# message, and the same id as its note); file 6's messages are all null, file 7's all shorter than 3 bytes; values
# hold unicode, empty strings, nulls, `%`, `_`, `\` and `!`.

FILES = 8
ROWS = 30
SPECIAL = ["100% done", "a_b\\c", "50%_off!", "C:\\temp\\x", "under_score", "%_\\!#", "it's", "e\u0301t\u00e9"]
SHORT = ["", "a", "\u00e9", "ab", "%_", "\u00df", None]
TAGS = ["alpha", "beta", "\u00fcn\u00ef", "x%y", "q_r", ""]
SCHEMA = pa.schema([("id", pa.int64()), ("msg", pa.string()), ("tag", pa.string()), ("note", pa.string())])


def _message(rng: random.Random):
    r = rng.random()
    if r < 0.1:
        return None
    if r < 0.17:
        return ""
    if r < 0.35:
        return rng.choice(SPECIAL) + rng.choice(["", " ", _random_text(rng, 3)])
    return _random_text(rng, 8)


@pytest.fixture(scope="module")
def logs(spark, module_system_path, tmp_path_factory):
    """{root, index (its path), needles (file number -> its trace id), files (path of each file number), ids
    (id -> path of its file)}: the table and its index, built once for the module."""
    rng = random.Random(5454)
    root = tmp_path_factory.mktemp("substring_logs")
    needles, files, ids = {}, {}, {}
    for f in range(FILES):
        rows = []
        for i in range(ROWS):
            row_id = f * 1000 + i
            msg = None if f == 6 else rng.choice(SHORT) if f == 7 else _message(rng)
            tag = None if rng.random() < 0.1 else f"t{f}-" + rng.choice(TAGS)
            rows.append({"id": row_id, "msg": msg, "tag": tag, "note": rng.choice(["n1", "n2", None])})
        if f < 6:
            needles[f] = f"trace{f}{rng.getrandbits(40):010x}"
            rows[17] |= {"msg": f"req {needles[f]} failed \u65e5\u672c \U0001F389", "note": needles[f]}
        path = f"{root}/part-{f}.parquet"
        pq.write_table(pa.Table.from_pylist(rows, SCHEMA), path, row_group_size=10)
        files[f] = path
        ids.update({r["id"]: path for r in rows})
    hsbloom.Hyperspace(spark).create_index(spark.read.parquet(str(root)), hsbloom.BFIndexConfig(
        "substring_logs", ["id", "tag", "note"], substring_columns=["msg", "tag"], ngram_size=3, substring_case_insensitive=True,
        granularity="row_group"))
    return {"root": str(root), "index": str(module_system_path / "substring_logs"), "needles": needles,
            "files": files, "ids": ids}


def _spark(p):
    """The reader's predicate as a Spark condition of the same meaning (a bytes literal as a string of its bytes)."""
    if isinstance(p, (And, Or)):
        conditions = [_spark(c) for c in p.children]
        out = conditions[0]
        for c in conditions[1:]:
            out = (out & c) if isinstance(p, And) else (out | c)
        return out
    column = F.col(p.column)
    if isinstance(p, Eq):
        return column == F.lit(p.value)
    if isinstance(p, In):
        return column.isin(list(p.values))
    if isinstance(p, Like):
        return F.like(column, F.lit(p.pattern), F.lit(p.escape))
    if isinstance(p, ILike):
        return F.ilike(column, F.lit(p.pattern), F.lit(p.escape))
    literal = F.lit(bytearray(p.literal)).cast("string") if isinstance(p.literal, bytes) else F.lit(p.literal)
    return {Contains: column.contains, StartsWith: column.startswith, EndsWith: column.endswith}[type(p)](literal)


def _rule_files(spark, df, predicates: list) -> list:
    """The files the Spark rule keeps for each predicate: the file listing of each scan of a union of one filtered
    scan per predicate, from the planned query (listing and pruning happen at planning; nothing is run)."""
    from hsbloom import jar

    hsbloom.enable(spark)
    found: list = []
    try:
        for start in range(0, len(predicates), 60):
            union = None
            for p in predicates[start:start + 60]:
                part = df.where(_spark(p)).select("id")
                union = part if union is None else union.unionAll(part)
            scans: list = []

            def is_scan(node) -> bool:
                c = node.getClass()
                while c is not None and c.getName() != "org.apache.spark.sql.execution.FileSourceScanExec":
                    c = c.getSuperclass()
                return c is not None

            def visit(node) -> None:
                if node.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
                    return visit(node.executedPlan())
                if is_scan(node):
                    scans.append({f.filePath().toPath().toUri().getPath()
                                  for f in node.selectedPartitions().toPartitionArray()})
                    return
                children = node.children().iterator()
                while children.hasNext():
                    visit(children.next())

            visit(jar.java_dataframe(union).queryExecution().executedPlan())
            assert len(scans) == len(predicates[start:start + 60])
            found += scans
    finally:
        hsbloom.disable(spark)
    return found


def _matching_files(spark, logs: dict, predicates: list) -> list:
    """Per predicate, the files holding a row Spark's own evaluation of it selects (one scan of the whole table,
    one boolean column per predicate; hsbloom off)."""
    hsbloom.disable(spark)
    rows = spark.read.parquet(logs["root"]).select(
        "id", *[_spark(p).alias(f"c{i}") for i, p in enumerate(predicates)]).collect()
    return [{logs["ids"][r.id] for r in rows if r[f"c{i}"]} for i in range(len(predicates))]


def _leaves(p) -> list:
    return [leaf for c in p.children for leaf in _leaves(c)] if isinstance(p, (And, Or)) else [p]


def _spark_makes_it_equality(p) -> bool:
    """Spark's optimizer rewrites a LIKE without wildcards (and without its escape character) to `=`, which only a
    value filter answers (docs/design/readers.md): the reader answers the pattern with the substring filter."""
    return any(isinstance(leaf, (Like, ILike)) and leaf.escape not in leaf.pattern
               and not set("%_") & set(leaf.pattern) for leaf in _leaves(p))


def _reader_keeps_every_file(p) -> bool:
    """An `ilike` pattern outside ASCII: the reader leaves its lower case to Spark and keeps every file, where the
    Spark rule, lowering it in the session, may prune."""
    return any(isinstance(leaf, ILike) and not leaf.pattern.isascii() for leaf in _leaves(p))


def _pattern(rng: random.Random, text: str, escape: str) -> str:
    """A LIKE pattern that `text` (escaped where it holds a wildcard or the escape) may match: wildcards put in."""
    out = ["%"] if rng.random() < 0.6 else []
    for ch in text:
        r = rng.random()
        out.append(escape + ch if ch in ("%", "_", escape) else "_" if r < 0.08 else "%" if r < 0.14 else ch)
    return "".join(out + (["%"] if rng.random() < 0.6 else []))


def _random_substring_predicate(rng: random.Random, values: dict):
    column = rng.choice(["msg"] * 5 + ["tag"] * 2 + ["note"])
    value = rng.choice(values[column]) if rng.random() < 0.8 else _random_text(rng, 6)
    a = rng.randint(0, len(value))
    b = rng.randint(a, len(value))
    kind = rng.random()
    if kind < 0.25:
        return contains(column, value[a:b])
    if kind < 0.35:
        return startswith(column, value[:b])
    if kind < 0.45:
        return endswith(column, value[a:])
    if kind < 0.52:  # raw bytes, cut anywhere: possibly inside a character
        encoded = value.encode("utf-8")
        a = rng.randint(0, len(encoded))
        return rng.choice([contains, startswith, endswith])(column, encoded[a:rng.randint(a, len(encoded))])
    escape = rng.choice(["\\", "\\", "!", "#", "X"])
    pattern = _pattern(rng, value[a:b], escape) if rng.random() < 0.85 else _random_text(rng, 5)
    if kind < 0.75:
        return like(column, pattern, escape)
    # ILIKE: the pattern in another case (an ASCII one answered by the lower-cased filter; an upper-case escape
    # character that lowering makes a literal, as Spark reads it).
    return ilike(column, pattern.swapcase() if rng.random() < 0.5 else pattern.upper(), escape)


def _random_predicate(rng: random.Random, values: dict):
    kind = rng.random()
    if kind < 0.72:
        return _random_substring_predicate(rng, values)
    other = rng.choice([eq("id", rng.choice(values["id"])), eq("tag", rng.choice(values["tag"])),
                        eq("note", rng.choice(values["note"])), isin("id", rng.sample(values["id"], 3)),
                        _random_substring_predicate(rng, values)])
    return (and_ if kind < 0.86 else or_)(_random_substring_predicate(rng, values), other)


def test_the_reader_keeps_every_file_spark_matches_in_and_the_files_the_spark_rule_keeps(spark, logs):
    """300 random predicates (contains, startswith, endswith with str and bytes literals, LIKE with `\\`, `!` and
    `#` escapes, AND/OR with equalities): every file holding a row Spark's own evaluation selects is kept, and the
    files kept are the Spark rule's on the same index (but for a LIKE Spark rewrites to `=`: kept files only)."""
    index = open_index(logs["index"])
    assert index.unusable is None and index.damage == []
    assert index.version.substring_columns == ("msg", "tag") and index.version.ngram_sizes == {"msg": 3, "tag": 3}
    table = pq.ParquetDataset(logs["root"]).read()
    values = {c: sorted({v for v in table.column(c).to_pylist() if v is not None})
              for c in ("id", "msg", "tag", "note")}
    rng = random.Random(5455)
    predicates, refused = [], []
    while len(predicates) < 300:
        p = _random_predicate(rng, values)
        # A pattern Spark refuses fails its query (test_whatever_sparks_like... asks Spark): the reader keeps all.
        (refused if any(isinstance(q, Like) and like_runs(q.pattern, q.escape) is None
                        or isinstance(q, ILike) and like_runs(q.pattern.lower(), q.escape) is None
                        for q in _leaves(p)) else predicates).append(p)
    pruned = [index.prune(p) for p in predicates]
    matching = _matching_files(spark, logs, predicates)
    kept_by_rule = _rule_files(spark, spark.read.parquet(logs["root"]), predicates)
    compared = 0
    for p, ours, holders, theirs in zip(predicates, pruned, matching, kept_by_rule):
        assert holders <= set(ours.files), str(p)
        if _reader_keeps_every_file(p):
            assert theirs <= set(ours.files), str(p)
        elif not _spark_makes_it_equality(p):
            assert set(ours.files) == theirs, str(p)
            compared += 1
        else:
            assert holders <= theirs, str(p)
    for p in refused:
        assert len(index.prune(p).files) == FILES, str(p)
    assert compared > 200 and len(refused) >= 2
    selective = sum(1 for ours in pruned if ours.skipped and ours.files)
    assert selective > 60 and sum(1 for ours in pruned if not ours.files) > 10
    assert sum(1 for ours, holders in zip(pruned, matching) if set(ours.files) == holders and ours.skipped) > 40


def test_needles_read_their_file_and_unanswered_conditions_keep_every_file(logs):
    index = open_index(logs["index"])
    needles, files = logs["needles"], logs["files"]
    everything = sorted(files.values())
    for f, needle in needles.items():
        message = f"req {needle} failed \u65e5\u672c \U0001F389"
        for p in (contains("msg", needle), contains("msg", needle.encode()), like("msg", f"%{needle}%"),
                  like("msg", f"req_{needle}%\u672c%", "!"), startswith("msg", f"req {needle}"),
                  endswith("msg", f"{needle} failed \u65e5\u672c \U0001F389"), like("msg", message),
                  and_(contains("msg", needle), eq("id", f * 1000 + 17)), or_(contains("msg", needle), eq("id", -1)),
                  eq("note", needle)):
            assert index.prune(p).files == [files[f]], str(p)
    # ILIKE, by the filter of lower-cased values: an ASCII pattern in any case; one outside ASCII keeps every file.
    for f, needle in needles.items():
        for p in (ilike("msg", f"%{needle.upper()}%"), ilike("msg", f"REQ {needle.upper()}%"),
                  ilike("msg", f"%{needle.swapcase()} FAILED%")):
            assert index.prune(p).files == [files[f]], str(p)
    outside = index.prune(ilike("msg", f"%{needles[0]} failed \u65e5%"))
    assert len(outside.files) == FILES and "a character outside ASCII" in outside.explain()
    assert len(index.prune(ilike("note", f"%{needles[0]}%")).files) == FILES
    # A substring filter never answers `=`, a value filter never a substring condition.
    whole = index.prune(eq("msg", f"req {needles[0]} failed \u65e5\u672c \U0001F389"))
    assert sorted(whole.files) == everything
    assert "msg is not indexed (it has a substring filter, for contains" in whole.explain()
    by_values = index.prune(contains("note", needles[0]))
    assert sorted(by_values.files) == everything and "note has no substring filter" in by_values.explain()
    # Nothing to probe: a run shorter than 3 bytes, a pattern Spark refuses, a literal with no UTF-8 form.
    for p, why in ((like("msg", "%ab%"), "no literal run of 3 bytes"), (contains("msg", "\u00e9"), "no literal run"),
                   (like("msg", "a\\b%"), "Spark refuses the pattern"), (like("msg", "a!b", "!"), "Spark refuses"),
                   (contains("msg", "abc\udc00"), "no UTF-8 form")):
        answer = index.prune(p)
        assert sorted(answer.files) == everything and why in answer.explain(), str(p)
    # OR keeps what either side keeps; AND what both keep.
    either = index.prune(or_(contains("msg", needles[1]), contains("msg", needles[2])))
    assert sorted(either.files) == [files[1], files[2]]
    assert index.prune(and_(contains("msg", needles[1]), contains("msg", needles[2]))).files == []
    assert index.prune(or_(contains("msg", needles[1]), contains("note", needles[2]))).files == everything
    # Candidates (the index's own answer, no listing) agree.
    assert index.candidates(contains("msg", needles[3])) == ["file:" + files[3]]


def test_a_kept_file_reads_the_row_groups_its_zones_keep_as_by_the_spark_rule(spark, logs):
    """Zones have substring filters too: a needle reads its file's one row group that holds it; OR with an
    equality reads the equality's row groups of the files the substring filter rules out (the jar's
    `narrowedTo`). Row groups are counted as test_readers.py counts them, and are the Spark rule's."""
    from pruning_support import files_listed

    index = open_index(logs["index"])
    needles, files = logs["needles"], logs["files"]
    checks = [contains("msg", needles[0]), and_(eq("id", 1017), contains("msg", needles[1])),
              or_(eq("id", 2005), contains("msg", needles[3])), or_(eq("id", 2005), contains("msg", "not a needle")),
              and_(eq("tag", "t4-beta"), like("tag", "%beta"))]
    df = spark.read.parquet(logs["root"])
    union = None
    for p in checks:
        part = df.where(_spark(p)).select("id")
        union = part if union is None else union.unionAll(part)
    hsbloom.enable(spark)
    try:
        kept, metrics = files_listed(union)
    finally:
        hsbloom.disable(spark)
    answers = [index.prune(p) for p in checks]
    assert [sorted(a.files) for a in answers[:4]] == [[files[0]], [files[1]], [files[2], files[3]], [files[2]]]
    # The needles are in row 17 of their files: row group 1 of 10 rows each.
    assert [a.row_groups for a in answers[:4]] == [{files[0]: [1]}, {files[1]: [1]}, {files[2]: [0], files[3]: [1]},
                                                   {files[2]: [0]}]
    for p, ours, theirs, m in zip(checks, answers, kept, metrics):
        assert set(ours.files) == theirs, str(p)
        spark_read = (m["hsbloomRowGroupsBefore"] - m["hsbloomRowGroupsPruned"] if "hsbloomRowGroupsPruned" in m
                      else 3 * len(theirs))
        assert sum(len(ours.row_groups.get(f, range(3))) for f in ours.files) == spark_read, str(p)


def test_a_file_without_its_substring_filter_row_is_kept(logs, tmp_path):
    import shutil

    copy = tmp_path / "substring_logs"
    shutil.copytree(logs["index"], copy)
    victim = "file:" + logs["files"][2]
    files = logs["files"]

    def drop_rows(table: str) -> None:
        for part in (copy / "v__=0" / table).glob("*.parquet"):
            rows = pq.read_table(part)
            gone = [c == "ngram3(msg)" and p == victim for c, p in zip(rows.column("column").to_pylist(),
                                                                       rows.column("file_path").to_pylist())]
            if any(gone):
                pq.write_table(rows.filter(pa.array([not g for g in gone])), part)

    # Without its file row, the file's zones still answer for it (and rule out each row group), as in the jar.
    drop_rows("files")
    index = open_index(str(copy))
    assert index.damage == []
    assert sorted(index.prune(contains("msg", logs["needles"][0])).files) == [files[0]]
    # Without its zone rows too, nothing answers for it: kept.
    drop_rows("zones")
    index = open_index(str(copy))
    assert index.damage == []
    assert sorted(index.prune(contains("msg", logs["needles"][0])).files) == [files[0], files[2]]
    assert index.prune(contains("tag", "t2-\u00fcn")).files == [files[2]]  # its other filters still answer


def test_the_log_gives_the_substring_columns_and_ngram_size_checked(logs):
    newest = max((Path(logs["index"]) / "_hsbloom_log").glob("*.json"))
    entry = json.loads(newest.read_text())
    assert entry["config"]["substring_columns"] == ["msg", "tag"] and entry["config"]["ngram_sizes"] == {"msg": 3,
                                                                                                         "tag": 3}
    without = json.loads(newest.read_text())
    del without["config"]["substring_columns"], without["config"]["ngram_sizes"]
    version = parse(json.dumps(without))[1]
    assert (version.substring_columns, version.ngram_sizes, version.gram_key("msg")) == ((), {}, None)
    entry["config"]["ngram_sizes"] = {"msg": 5, "tag": 4}
    assert [parse(json.dumps(entry))[1].gram_key(c) for c in ("msg", "tag")] == ["ngram5(msg)", "ngram4(tag)"]
    # An entry written when one n served every substring column.
    legacy = json.loads(newest.read_text())
    del legacy["config"]["ngram_sizes"]
    legacy["config"]["ngram_size"] = 6
    assert parse(json.dumps(legacy))[1].ngram_sizes == {"msg": 6, "tag": 6}
    for field, bad, message in (("ngram_sizes", {"msg": 3}, "an n for each substring column and no other"),
                                ("ngram_sizes", {"msg": 1, "tag": 3}, "config.ngram_sizes.msg must be an integer from 2"),
                                ("ngram_sizes", {"msg": 3, "tag": True}, "from 2 to 8"),
                                ("ngram_sizes", 3, "config.ngram_sizes must be a JSON object"),
                                ("ngram_size", 1, "config.ngram_size must be an integer from 2 to 8"),
                                ("ngram_size", 9, "from 2 to 8"), ("ngram_size", True, "from 2 to 8"),
                                ("ngram_size", "3", "from 2 to 8"), ("ngram_size", 3.0, "from 2 to 8"),
                                ("substring_columns", "msg", "config.substring_columns must be a JSON array"),
                                ("substring_columns", [1], "an element of config.substring_columns must be a string"),
                                ("substring_columns", ["msg", "msg"], "distinct non-empty column names"),
                                ("substring_columns", [""], "distinct non-empty column names")):
        bad_entry = json.loads(newest.read_text())
        if field == "ngram_size":  # read only from an entry without ngram_sizes
            del bad_entry["config"]["ngram_sizes"]
        bad_entry["config"][field] = bad
        with pytest.raises(UnusableIndex, match=message):
            parse(json.dumps(bad_entry))


def test_the_predicates_check_their_arguments_and_read_like_sql():
    assert str(contains("m", "a'b")) == 'contains(m, "a\'b")'
    assert str(startswith("m", b"\xff")) == "startswith(m, b'\\xff')"
    assert str(endswith("m", "z")) == "endswith(m, 'z')"
    assert str(like("m", "a%")) == "m LIKE 'a%'" and str(like("m", "a!%%", "!")) == "m LIKE 'a!%%' ESCAPE '!'"
    assert str(and_(contains("m", "x"), eq("id", 1))) == "(contains(m, 'x') AND id = 1)"
    assert str(ilike("m", "A%")) == "m ILIKE 'A%'" and str(ilike("m", "a!%", "!")) == "m ILIKE 'a!%' ESCAPE '!'"
    for call, message in ((lambda: contains("m", 3), "contains's literal must be a str"),
                          (lambda: startswith("m", None), "startswith's literal must be a str"),
                          (lambda: endswith("m", ["x"]), "endswith's literal must be a str"),
                          (lambda: like("m", b"a%"), "like's pattern must be a str"),
                          (lambda: like("m", "a%", "!!"), "like's escape must be one character"),
                          (lambda: ilike("m", 5), "ilike's pattern must be a str"),
                          (lambda: ilike("m", "a%", "!!"), "ilike's escape must be one character"),
                          (lambda: like("m", "a%", ""), "like's escape must be one character"),
                          (lambda: like("m", "a%", "\U0001F600"), "like's escape must be one character"),
                          (lambda: contains("", "x"), "a column name must be a non-empty string"),
                          (lambda: and_(contains("m", "x"), "m LIKE 'x'"), "and_/or_ combine predicates")):
        with pytest.raises(InvalidArgumentError, match=message):
            call()


def test_probed_grams_are_the_jars_sixteen_spread_over_a_long_literal():
    text = "abcdefghijklmnopqrstuvwxyz0123456789".encode()
    grams = [int(h) for h in gram_hashes(text, 3)]
    assert probed_grams([text], 3) == [grams[i * 34 // 16] for i in range(16)]
    assert probed_grams([b"abcab", b"cab"], 3) == [int(h) for h in gram_hashes(b"abcab", 3)][:3]  # distinct, in order
    assert probed_grams([b"ab"], 3) == []
    assert set(probed_grams([b"hello", b"world"], 2)) == required_grams(["hello", "world"], 2)


def test_a_prefix_and_suffix_pattern_probes_as_spark_rewrites_it():
    """Spark's optimizer makes `LIKE 'pre%suf'` (no `_`, no escape character) startswith AND endswith, and the jar
    probes up to 16 grams of each: the reader probes the same ones; any other pattern, 16 of all its runs'."""
    from hsbloom.readers.index import _probed_grams

    prefix, suffix = "abcdefghijklmnopqrstu", "0123456789ABCDEFGHIJ"
    split = probed_grams([prefix.encode()], 3) + probed_grams([suffix.encode()], 3)
    assert len(split) == 32 and _probed_grams(like("m", f"{prefix}%{suffix}"), 3) == split
    assert _probed_grams(like("m", f"%{prefix}%{suffix}"), 3) == probed_grams([prefix.encode(), suffix.encode()], 3)
    escaped = like("m", f"{prefix}!%%{suffix}", "!")  # holds its escape character: Spark leaves it a LIKE
    assert _probed_grams(escaped, 3) == probed_grams([(prefix + "%").encode(), suffix.encode()], 3)
    assert _probed_grams(contains("m", b"\xff\xfeab"), 2) == probed_grams([b"\xff\xfeab"], 2)
    assert _probed_grams(like("m", "a\\b"), 3) is None and _probed_grams(contains("m", "ab"), 3) == []
