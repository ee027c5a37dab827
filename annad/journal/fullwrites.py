"""The journal's two kinds of write on a full state disk (:mod:`annad.backups.statefs`).

A write recording what already happened (:func:`recording`) may use the journal reserve: on
SQLITE_FULL the reserve file is deleted and the write retried once. A write that starts
something new (:func:`starting`) is refused while the reserve cannot be kept, so it never eats
the room an outcome needs. Both turn a full disk into :class:`StateFull` (``BACKUP_REFUSED``).
"""

from __future__ import annotations

import functools
import sqlite3
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Protocol, TypeVar

from anna_common.errors import AnnaError
from annad.backups.statefs import is_full

if TYPE_CHECKING:
    from collections.abc import Callable

    from annad.backups.statefs import Reserve


class _Journal(Protocol):
    """What these wrappers use of :class:`annad.journal.store.Journal`."""

    @property
    def reserve(self) -> Reserve: ...

    def full(self, exc: BaseException | None) -> StateFull: ...


_P = ParamSpec("_P")
_T = TypeVar("_T")
_J = TypeVar("_J", bound=_Journal)


class StateFull(AnnaError):
    """The state disk has no room for the journal (``BACKUP_REFUSED``: nothing was run)."""


def recording(method: Callable[Concatenate[_J, _P], _T]
               ) -> Callable[Concatenate[_J, _P], _T]:
    """A write recording what already happened: on a full disk, release the reserve and
    retry once (the plan's end must reach the journal); still full: :class:`StateFull`."""

    def wrapper(self: _J, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError as exc:
            if not is_full(exc):
                raise
            if not self.reserve.release():
                raise self.full(exc) from None
        return _full_as_state_full(self, method, *args, **kwargs)

    functools.update_wrapper(wrapper, method)
    return wrapper


def starting(method: Callable[Concatenate[_J, _P], _T]
              ) -> Callable[Concatenate[_J, _P], _T]:
    """A write that starts something new: only while the reserve can be kept in place."""

    def wrapper(self: _J, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        if not self.reserve.ensure():
            raise self.full(None)
        return _full_as_state_full(self, method, *args, **kwargs)

    functools.update_wrapper(wrapper, method)
    return wrapper


def _full_as_state_full(journal: _J, method: Callable[Concatenate[_J, _P], _T],
                        /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """Call ``method``; a full disk becomes :class:`StateFull`, any other error stays."""
    try:
        return method(journal, *args, **kwargs)
    except sqlite3.OperationalError as exc:
        if is_full(exc):
            raise journal.full(exc) from None
        raise
