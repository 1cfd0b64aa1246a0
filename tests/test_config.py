"""BFIndexConfig in Python: its fields and their types, checked before any JVM call; the values are the jar's.

Which names, fpp values, granularities and expected_num_items an index accepts, and the default fpp, are the
jar's rules, tested where they live (jvm/src/test/scala/hsbloom/BFIndexConfigSuite.scala). Here: what only
Python can show: a wrong type is refused when the config is made, and a value the jar refuses arrives as
InvalidConfigError with the jar's message, whatever the value (some, such as NaN or an empty list, SQL cannot
spell as they are).
"""

from __future__ import annotations

import math

import pytest

import hsbloom
from hsbloom import BFIndexConfig
from hsbloom.errors import HsbloomError, InvalidConfigError


def test_defaults_and_columns_kept_as_a_tuple():
    config = BFIndexConfig("events_ids", ["user_id", "trace_id"])
    assert config.indexed_columns == ("user_id", "trace_id")
    assert (config.expected_num_items, config.fpp, config.global_filter) == (None, None, False)
    assert config.granularity == "file"
    assert (config.substring_columns, config.ngram_size) == ((), None)
    assert BFIndexConfig("i", ["x"], substring_columns=["m"]).substring_columns == ("m",)
    assert BFIndexConfig("i", ("x",), fpp=1).fpp == 1.0 and isinstance(BFIndexConfig("i", ("x",), fpp=1).fpp, float)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"index_name": 42}, r"index_name must be a string, got 42 \(int\)"),
        ({"index_name": None}, "index_name must be a string, got None"),
        ({"indexed_columns": "user_id"}, r"a list of column names, e.g. \['user_id'\], not a string"),
        ({"indexed_columns": {"a"}}, "indexed_columns must be a list of column names, got set"),
        ({"indexed_columns": ["a", 3]}, r"indexed_columns must be a list of column names as strings, got 3 \(int\)"),
        ({"expected_num_items": 1.5}, r"expected_num_items must be None or an int, got 1.5 \(float\)"),
        ({"expected_num_items": True}, r"expected_num_items must be None or an int, got True \(bool\)"),
        ({"expected_num_items": "5"}, "expected_num_items must be None or an int"),
        ({"fpp": True}, r"fpp must be None or a number strictly between 0 and 1, got True \(bool\)"),
        ({"fpp": "0.1"}, r"fpp must be None or a number .*, got '0.1' \(str\)"),
        ({"global_filter": "yes"}, r"global_filter must be True or False, got 'yes' \(str\)"),
        ({"global_filter": 1}, "global_filter must be True or False, got 1"),
        ({"granularity": None}, "granularity must be a string, 'file' or 'row_group', got None"),
        ({"substring_columns": "message"}, r"substring_columns must be a list of column names, e.g. \['message'\]"),
        ({"substring_columns": [None]}, "substring_columns must be a list of column names as strings, got None"),
        ({"ngram_size": 3.0}, r"ngram_size must be None or an int from 2 to 8, got 3.0 \(float\)"),
    ],
)
def test_a_wrong_type_is_refused_when_the_config_is_made(arguments, message):
    """Before any JVM call: no session is involved in making a config."""
    given = {"index_name": "idx", "indexed_columns": ["x"], **arguments}
    with pytest.raises(InvalidConfigError, match=message) as raised:
        BFIndexConfig(**given)
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, HsbloomError)


def test_values_are_left_to_the_jar():
    """Python keeps no copy of the jar's rules: a value of the right type is kept as given, to be checked once, by
    the jar, when the index is created."""
    config = BFIndexConfig("a..b", [], expected_num_items=0, fpp=2.0, granularity="rows")
    assert (config.index_name, config.indexed_columns, config.fpp, config.granularity) == ("a..b", (), 2.0, "rows")


def test_config_is_immutable():
    config = BFIndexConfig("idx", ["x"])
    with pytest.raises(AttributeError):
        config.fpp = 0.5  # type: ignore[misc]


def test_a_value_the_jar_refuses_arrives_as_invalid_config_error_with_its_message(spark, system_path, tmp_path):
    data = str(tmp_path / "t")
    spark.range(10).write.parquet(data)
    hs = hsbloom.Hyperspace(spark)
    with pytest.raises(InvalidConfigError) as raised:
        hs.create_index(spark.read.parquet(data), BFIndexConfig("a..b", ["id"]))
    assert str(raised.value) == (
        "index_name 'a..b' contains '..'; an index name is 1 to 128 letters A-Z a-z, digits, '_', '-' and '.', not "
        "starting with '.' and without '..'"
    )
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, HsbloomError)
    assert raised.value.__cause__.getCondition() == "HSBLOOM_INVALID_CONFIG"  # the jar's error, chained
    assert not system_path.exists() and hs.indexes().count() == 0


@pytest.mark.parametrize(
    "config, message",
    [
        (BFIndexConfig("", ["id"]), "index_name must not be empty"),
        (BFIndexConfig("a\nb", ["id"]), r"index_name 'a\\u000Ab' contains control characters \\u000A"),
        (BFIndexConfig("ok", []), "indexed_columns must name at least one column"),
        (BFIndexConfig("ok", [""]), "indexed_columns must hold non-empty strings, got ''"),
        (BFIndexConfig("ok", ["id"], fpp=math.nan), "fpp must be strictly between 0 and 1, got NaN"),
        (BFIndexConfig("ok", ["id"], fpp=-math.inf), "fpp must be strictly between 0 and 1, got -Infinity"),
        (BFIndexConfig("ok", ["id"], expected_num_items=2**63), "positive integer of at most 9223372036854775807"),
    ],
    ids=["empty name", "control character", "no column", "empty column", "NaN", "-inf", "beyond a long"],
)
def test_every_value_reaches_the_jar_as_given(spark, system_path, tmp_path, config, message):
    """Values SQL has no literal for (NaN), or that read as another statement (an empty name or column list), still
    reach the jar's rules, not a syntax error (which would arrive as OperationFailedError)."""
    data = str(tmp_path / "t")
    spark.range(10).write.parquet(data)
    with pytest.raises(InvalidConfigError, match=message):
        hsbloom.Hyperspace(spark).create_index(spark.read.parquet(data), config)
    assert not system_path.exists()
