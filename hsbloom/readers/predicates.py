"""The predicates the reader answers: `=`, `IN`, `IS NULL` on indexed columns, and AND/OR of them.

Built with `eq`, `isin`, `is_null`, `and_`, `or_`; anything else a query filters on is simply not given to the
reader (the query engine still applies the whole filter to the files kept, so leaving a conjunct out keeps more
files, never fewer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Union

from hsbloom.errors import InvalidArgumentError


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


Predicate = Union[Eq, In, IsNull, And, Or]


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


def _children(children: tuple) -> tuple:
    for c in children:
        if not isinstance(c, (Eq, In, IsNull, And, Or)):
            raise InvalidArgumentError(
                f"and_/or_ combine predicates made by eq, isin, is_null, and_ or or_, not {type(c).__name__}"
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
