"""References from one planned call to another's result, found and filled in one way.

ReWOO's steps name an earlier result as ``#E1``; LLM Compiler's tasks as ``$1``
or ``${1}``. Both look for references only in the strings of a call's
arguments, however deeply nested, and both replace a reference by the result
it names just before the call runs. A :class:`ReferenceSyntax` holds one
pattern's spelling; the walking is written once here.

Examples:
    >>> import re
    >>> dollars = ReferenceSyntax(re.compile(r"\\$(\\d+)"), lambda match: int(match.group(1)))
    >>> args = {"expression": "$1 * $2", "notes": ["see $1"]}
    >>> dollars.references(args)
    [1, 2]
    >>> dollars.substitute(args, {1: "6", 2: "7"})
    {'expression': '6 * 7', 'notes': ['see 6']}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

Key = TypeVar("Key")


@dataclass(frozen=True)
class ReferenceSyntax(Generic[Key]):
    """How one pattern writes a reference to an earlier result.

    Attributes:
        pattern: Matches one reference in a string.
        key: The result a match names (``"E1"``, ``1`` …).
    """

    pattern: re.Pattern[str]
    key: Callable[[re.Match[str]], Key]

    def references(self, value: Any) -> list[Key]:
        """The results ``value``'s strings refer to, in order of first mention."""
        found: list[Key] = []
        for text in strings_in(value):
            for match in self.pattern.finditer(text):
                key = self.key(match)
                if key not in found:
                    found.append(key)
        return found

    def substitute(self, value: Any, results: Mapping[Key, str]) -> Any:
        """``value`` with every reference in its strings replaced by the result it names.

        A reference to a result not in ``results`` is left as written.
        """
        if isinstance(value, str):
            return self.pattern.sub(lambda m: results.get(self.key(m), m.group(0)), value)
        if isinstance(value, Mapping):
            return {key: self.substitute(item, results) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.substitute(item, results) for item in value)
        return value


def strings_in(value: Any) -> Iterable[str]:
    """Every string in ``value``: itself, or nested in mapping values, lists and tuples."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)
