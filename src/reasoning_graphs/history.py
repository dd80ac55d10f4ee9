"""Growing histories that keep running folds of themselves.

A run's conversation and trajectory only grow, and every step asks them the
same questions: which question is this, what has it spent, which calls are
answered, what did the last rounds bring. Scanning the whole history for each
answer makes a step's cost grow with the run. So the state's reducers return an
:class:`Indexed` list, which takes over the folds of the list it extends: a
:class:`Fold` then reads only the items added since it last ran.

A fold is a cache, never the record: any other sequence (a plain list, a list
rebuilt from a checkpoint, a history whose earlier messages were replaced by
id) is folded from its first item, and an ``Indexed`` list checks that the items
a fold has read are still its own before it trusts the result. Nothing of a
fold is saved in checkpoints; after a resume it is rebuilt once.

Examples:
    >>> turns = Fold("turns", lambda: 0, lambda count, item: count + (item == "q"))
    >>> history = Indexed(["q", "a"])
    >>> folded(history, turns)
    1
    >>> longer = Indexed([*history, "q"], extends=history)
    >>> folded(longer, turns)  # reads only the new item
    2
    >>> folded(["q", "q", "q"], turns)  # a plain list: from the start
    3
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

Acc = TypeVar("Acc")


@dataclass(frozen=True)
class Fold(Generic[Acc]):
    """A running summary of a history: its empty value, and how one more item changes it.

    ``step`` may change the summary in place and return it: a summary belongs to
    the history that made it. Readers must not change it, and a ``step`` must not
    fold the history it is folding.
    """

    name: str
    start: Callable[[], Acc]
    step: Callable[[Acc, Any], Acc]


class _Folds:
    """The folds of one growing history, shared by the lists that extend each other."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done: dict[str, tuple[int, Any, Any]] = {}
        """By fold name: how many items it has read, the last of them, the summary."""


class Indexed(list[Any]):
    """A list that shares its folds with the list it extends (``extends``), when it does.

    It extends ``extends`` when its first items are the very objects of that
    list; otherwise (a message replaced by id) its folds start over.
    """

    __slots__ = ("_folds",)
    _folds: _Folds

    def __init__(self, items: Iterable[Any] = (), *, extends: Sequence[Any] | None = None):
        super().__init__(items)
        if isinstance(extends, Indexed) and _starts_with(self, extends):
            self._folds = extends._folds
        else:
            self._folds = _Folds()

    @classmethod
    def extending(cls, base: Sequence[Any], added: Iterable[Any] = ()) -> Indexed:
        """``base``'s items, then ``added``'s: a list that starts with ``base`` by its making,
        so it shares ``base``'s folds (when ``base`` is an :class:`Indexed` list) without
        the check of every item that ``extends`` makes, which grows with the list."""
        grown = cls.__new__(cls)
        list.__init__(grown, [*base, *added])
        grown._folds = base._folds if isinstance(base, Indexed) else _Folds()
        return grown

    def __copy__(self) -> Indexed:
        return Indexed.extending(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))  # a pickled copy is a plain list: its folds stay here

    def fold(self, fold: Fold[Acc]) -> Acc:
        """``fold`` over this list, reading only what it has not read yet."""
        folds, length = self._folds, len(self)
        with folds.lock:
            count, last, summary = folds.done.get(fold.name, (0, None, None))
            if count == length and count and self[-1] is last:
                return summary  # nothing added since it last ran
            if count == 0 or count > length or self[count - 1] is not last:
                count, summary = 0, fold.start()
            for index in range(count, length):
                summary = fold.step(summary, self[index])
            if length:
                folds.done[fold.name] = (length, self[-1], summary)
            return summary


def folded(items: Sequence[Any] | None, fold: Fold[Acc]) -> Acc:
    """``fold`` over ``items``: incrementally for an :class:`Indexed` list, else from the start."""
    if isinstance(items, Indexed):
        return items.fold(fold)
    summary = fold.start()
    for item in items or ():
        summary = fold.step(summary, item)
    return summary


def _starts_with(items: Sequence[Any], prefix: Sequence[Any]) -> bool:
    return len(items) >= len(prefix) and all(map(operator.is_, prefix, items))
