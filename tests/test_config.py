"""BFIndexConfig: every field is checked at construction, with a message saying what is wrong."""

from __future__ import annotations

import pytest

from hsbloom import BFIndexConfig
from hsbloom.errors import InvalidConfigError


def test_defaults_and_columns_kept_as_a_tuple():
    config = BFIndexConfig("events_ids", ["user_id", "trace_id"])
    assert config.indexed_columns == ("user_id", "trace_id")
    assert (config.expected_num_items, config.fpp, config.global_filter) == (None, None, False)


def test_round_trips_through_its_dict_form():
    config = BFIndexConfig("a-b.c_1", ("x",), expected_num_items=1000, fpp=0.001, global_filter=False)
    data = config.to_dict()
    assert data == {
        "index_name": "a-b.c_1",
        "indexed_columns": ["x"],
        "expected_num_items": 1000,
        "fpp": 0.001,
        "global_filter": False,
    }
    assert BFIndexConfig.from_dict(data) == config
    zoned = BFIndexConfig("z", ("x",), granularity="row_group")
    assert zoned.to_dict()["granularity"] == "row_group" and BFIndexConfig.from_dict(zoned.to_dict()) == zoned


def test_from_dict_validates_and_refuses_unknown_fields():
    with pytest.raises(InvalidConfigError, match="fpp must be strictly between 0 and 1"):
        BFIndexConfig.from_dict({"index_name": "a", "indexed_columns": ["x"], "fpp": 2})
    with pytest.raises(InvalidConfigError, match=r"unknown index config fields \['bits'\]"):
        BFIndexConfig.from_dict({"index_name": "a", "indexed_columns": ["x"], "bits": 3})


@pytest.mark.parametrize(
    "name, message",
    [
        ("", "must not be empty"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("..", r"contains '\.\.'"),
        ("a..b", r"contains '\.\.'"),
        ("a\nb", "control characters"),
        ("a\x00b", "control characters"),
        ("a\x7fb", "control characters"),
        (".hidden", "starts with '.'"),
        ("a b", r"contains \[' '\]; use only letters"),
        ("x:y", r"contains \[':'\]"),
        ("é", r"contains \['é'\]"),
        ("n" * 129, "129 characters long; at most 128"),
        (42, "must be a string"),
    ],
)
def test_invalid_names_are_refused_with_the_reason(name, message):
    with pytest.raises(InvalidConfigError, match=message):
        BFIndexConfig(name, ["x"])


def test_longest_allowed_name():
    assert BFIndexConfig("n" * 128, ["x"]).index_name == "n" * 128


@pytest.mark.parametrize(
    "columns, message",
    [
        ([], "at least one column"),
        ("user_id", r"a list of column names, e.g. \['user_id'\]"),
        (["a", "b", "a"], r"lists \['a'\] more than once"),
        (["a", ""], "non-empty strings"),
        (["a", 3], "non-empty strings"),
        ({"a"}, "a list of column names"),
    ],
)
def test_invalid_columns_are_refused(columns, message):
    with pytest.raises(InvalidConfigError, match=message):
        BFIndexConfig("idx", columns)


@pytest.mark.parametrize("fpp", [0, 0.0, 1, 1.0, -0.1, 1.5, float("nan"), float("inf"), True, "0.1"])
def test_fpp_must_be_strictly_between_0_and_1(fpp):
    with pytest.raises(InvalidConfigError, match="fpp must be"):
        BFIndexConfig("idx", ["x"], fpp=fpp)


@pytest.mark.parametrize("items, message", [(0, "must be positive, got 0"), (-5, "must be positive"),
                                            (1.5, "positive integer"), (True, "positive integer")])
def test_expected_num_items_must_be_a_positive_int(items, message):
    with pytest.raises(InvalidConfigError, match=message):
        BFIndexConfig("idx", ["x"], expected_num_items=items)


def test_global_filter_must_be_a_bool():
    with pytest.raises(InvalidConfigError, match="global_filter must be True or False"):
        BFIndexConfig("idx", ["x"], global_filter="yes")


def test_config_is_immutable():
    config = BFIndexConfig("idx", ["x"])
    with pytest.raises(AttributeError):
        config.fpp = 0.5  # type: ignore[misc]


def test_the_default_fpp_keeps_false_positive_files_per_probe_at_one_in_twenty():
    default = BFIndexConfig("idx", ["x"])
    assert default.fpp is None and default.to_dict()["fpp"] is None
    assert BFIndexConfig.from_dict(default.to_dict()) == default
    # min(0.01, 0.05 / files): files x fpp, the expected false-positive files of one probed value, is 0.05
    # from 5 files on (fewer files: the 0.01 of the filters' usual default).
    assert [default.file_fpp(n) for n in (0, 1, 5)] == [0.01, 0.01, 0.01]
    for files in (6, 200, 10_000, 1_000_000):
        assert default.file_fpp(files) * files == pytest.approx(0.05)
    assert default.shared_fpp == 0.01
    fixed = BFIndexConfig("idx", ["x"], fpp=0.02)
    assert fixed.file_fpp(10_000) == 0.02 and fixed.shared_fpp == 0.02
