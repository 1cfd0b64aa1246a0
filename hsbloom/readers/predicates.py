"""The predicates the reader answers: `=`, `IN`, `IS NULL` on indexed columns, the substring conditions
(`contains`, `startswith`, `endswith`, `LIKE`) on columns with a substring filter, and AND/OR of them.

Built with `eq`, `isin`, `is_null`, `contains`, `startswith`, `endswith`, `like`, `and_`, `or_`; anything else a
query filters on is simply not given to the reader (the query engine still applies the whole filter to the files
kept, so leaving a conjunct out keeps more files, never fewer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Union

from hsbloom.errors import InvalidArgumentError
from hsbloom.readers.substring import DEFAULT_ESCAPE


@dataclass(frozen=True)
class Eq:
    column: str
    value: Any

    def __str__(self) -> str:
        return f"{self.column} = {self.value!r}"


@dataclass(frozen=True)
class In:
    column: str
    values: tuple

    def __str__(self) -> str:
        return f"{self.column} IN ({', '.join(repr(v) for v in self.values)})"


@dataclass(frozen=True)
class IsNull:
    column: str

    def __str__(self) -> str:
        return f"{self.column} IS NULL"


@dataclass(frozen=True)
class And:
    children: tuple

    def __str__(self) -> str:
        return "(" + " AND ".join(str(c) for c in self.children) + ")"


@dataclass(frozen=True)
class Or:
    children: tuple

    def __str__(self) -> str:
        return "(" + " OR ".join(str(c) for c in self.children) + ")"


@dataclass(frozen=True)
class _LiteralMatch:
    """A string function of the column and a literal (a str, or bytes: the raw bytes Spark compares)."""

    column: str
    literal: Union[str, bytes]
    function = ""  # the SQL function's name (a class attribute, not a field)

    def __str__(self) -> str:
        return f"{self.function}({self.column}, {self.literal!r})"


@dataclass(frozen=True)
class Contains(_LiteralMatch):
    """`contains(column, literal)`: the value holds `literal`."""

    function = "contains"


@dataclass(frozen=True)
class StartsWith(_LiteralMatch):
    function = "startswith"


@dataclass(frozen=True)
class EndsWith(_LiteralMatch):
    function = "endswith"


@dataclass(frozen=True)
class _Pattern:
    """A column matched against a LIKE pattern with an escape character."""

    column: str
    pattern: str
    escape: str = DEFAULT_ESCAPE
    keyword = ""  # LIKE or ILIKE (a class attribute, not a field)

    def __str__(self) -> str:
        escape = "" if self.escape == DEFAULT_ESCAPE else f" ESCAPE {self.escape!r}"
        return f"{self.column} {self.keyword} {self.pattern!r}{escape}"


@dataclass(frozen=True)
class Like(_Pattern):
    """`column LIKE pattern ESCAPE escape`, read as Spark reads it (hsbloom.readers.substring.like_runs)."""

    keyword = "LIKE"


@dataclass(frozen=True)
class ILike(_Pattern):
    """`column ILIKE pattern ESCAPE escape`: Spark's `lower(column) LIKE lower(pattern)`, answered by the column's
    filter of lower-cased values (`substring_case_insensitive`)."""

    keyword = "ILIKE"


# The substring conditions: answered by a column's substring filter (docs/substring.md), never by its values'.
SUBSTRING = (Contains, StartsWith, EndsWith, Like, ILike)
_ALL = (Eq, In, IsNull, And, Or) + SUBSTRING

Predicate = Union[Eq, In, IsNull, Contains, StartsWith, EndsWith, Like, ILike, And, Or]


def _column(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidArgumentError(f"a column name must be a non-empty string, got {name!r}")
    return name


def eq(column: str, value: Any) -> Eq:
    """`column = value`; a None value matches no row (SQL's `= NULL`)."""
    return Eq(_column(column), value)


def isin(column: str, values: Iterable[Any]) -> In:
    """`column IN (values)`; None among the values matches no row."""
    if isinstance(values, (str, bytes)):
        raise InvalidArgumentError(f"isin takes a collection of values, not one {type(values).__name__}: wrap it in a list")
    return In(_column(column), tuple(values))


def is_null(column: str) -> IsNull:
    return IsNull(_column(column))


def _literal(function: str, literal: Any) -> Union[str, bytes]:
    if not isinstance(literal, (str, bytes)):
        raise InvalidArgumentError(
            f"{function}'s literal must be a str (or bytes, the raw bytes Spark compares), got "
            f"{type(literal).__name__}: pass the text to look for, such as {function}('message', 'error')"
        )
    return literal


def contains(column: str, literal: Union[str, bytes]) -> Contains:
    """`contains(column, literal)`: values holding `literal` (SQL's `column LIKE '%literal%'`, without wildcards)."""
    return Contains(_column(column), _literal("contains", literal))


def startswith(column: str, literal: Union[str, bytes]) -> StartsWith:
    """`startswith(column, literal)`: values beginning with `literal`."""
    return StartsWith(_column(column), _literal("startswith", literal))


def endswith(column: str, literal: Union[str, bytes]) -> EndsWith:
    """`endswith(column, literal)`: values ending with `literal`."""
    return EndsWith(_column(column), _literal("endswith", literal))


def like(column: str, pattern: str, escape: str = DEFAULT_ESCAPE) -> Like:
    """`column LIKE pattern ESCAPE escape`, as Spark reads it: `%` any characters, `_` exactly one, `escape` before
    `%`, `_` or itself a literal. A pattern Spark refuses (`escape` before anything else) keeps every file."""
    _check_pattern("like", pattern, escape)
    return Like(_column(column), pattern, escape)


def ilike(column: str, pattern: str, escape: str = DEFAULT_ESCAPE) -> ILike:
    """`column ILIKE pattern ESCAPE escape`: `like` of the lower-cased value and pattern, answered by the column's
    filter of lower-cased values where the index has one. A pattern with a character outside ASCII keeps every
    file: its lower case is Spark's to choose (the session's locale, ICU), not the reader's."""
    _check_pattern("ilike", pattern, escape)
    return ILike(_column(column), pattern, escape)


def _check_pattern(function: str, pattern: Any, escape: Any) -> None:
    if not isinstance(pattern, str):
        raise InvalidArgumentError(f"{function}'s pattern must be a str, got {type(pattern).__name__}: pass a LIKE "
                                   "pattern such as '%error%'")
    # Spark's ESCAPE is one UTF-16 character: a character beyond U+FFFF is two, and Spark refuses it.
    if not isinstance(escape, str) or len(escape) != 1 or ord(escape) > 0xFFFF:
        raise InvalidArgumentError(f"{function}'s escape must be one character (as SQL's ESCAPE), got {escape!r}: "
                                   "pass one, such as '!', or leave the default '\\'")


def _children(children: tuple) -> tuple:
    for c in children:
        if not isinstance(c, _ALL):
            raise InvalidArgumentError(
                "and_/or_ combine predicates made by eq, isin, is_null, contains, startswith, endswith, like, and_ "
                f"or or_, not {type(c).__name__}"
            )
    if not children:
        raise InvalidArgumentError("and_/or_ need at least one predicate")
    return children


def and_(*children: Predicate) -> And:
    return And(_children(children))


def or_(*children: Predicate) -> Or:
    return Or(_children(children))


def check(predicate: Any) -> Predicate:
    """`predicate` if it is one of these predicates, else InvalidArgumentError naming the fix."""
    _children((predicate,))
    return predicate
