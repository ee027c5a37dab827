"""A damaged journal file: recognised on every use of the connection, and said in one way.

SQLite checks a page when it reads it. Opening the journal reads the header and the schema
only, so a file whose later pages are damaged (a bad disk sector, bits flipped by hand, a
truncated copy) opens cleanly and fails later: at start-up recovery, in ``history``, in the
middle of a plan. Before, that surfaced as a Python traceback and uvicorn's exit status 3 —
which the unit restarts, in a loop — or as INTERNAL_ERROR to the client.

So the connection itself (:class:`Connection`, with its :class:`Cursor`) turns SQLite's
"this is not a readable database" answers (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``) into
:class:`JournalDamaged`, wherever the read or write happens: one coded error
(``JOURNAL_DAMAGED``) with what is wrong, where, and how to recover (the backups stay; the
file is moved aside and checked with ``annad --check-journal``). At start the daemon prints it
as one line and exits with its own status, which the unit does not restart
(:data:`annad.main.EXIT_DAMAGED`); a request that meets it later answers it, coded. Other
SQLite errors (a full disk, a lock) keep their own handling in :mod:`annad.journal.store`.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any, Literal

from anna_common.errors import AnnaError, ErrorCode

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import TracebackType

DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
"""SQLite's primary result codes that mean the file is not a readable database."""


class JournalDamaged(AnnaError):
    """The journal file cannot be read as a journal (not SQLite, truncated, a damaged page,
    a schema that is not ours). Restarting cannot help: at start the daemon says so in one
    line and exits with its own status (``annad.main.EXIT_DAMAGED``), which the unit does not
    restart; later, the request that met it gets this error."""


def damaged(path: object, exc: BaseException) -> JournalDamaged:
    """The error for the journal at ``path``, which SQLite could not read (``exc``)."""
    aside = f"{path}.damaged"
    return JournalDamaged(
        f"the journal {path} is damaged ({exc})", code=ErrorCode.JOURNAL_DAMAGED,
        detail={"journal": str(path)},
        hint=f"stop annad, move the file aside (mv {path} {aside}) and start annad again with "
        f"a fresh journal; the backups in its directory stay; check the copy with: "
        f"annad --check-journal {aside}")


def is_damage(exc: BaseException) -> bool:
    """``exc`` says the file is not a readable database (not: full, locked, misuse)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:  # raised by the module itself, without SQLite's code
        return type(exc) is sqlite3.DatabaseError
    return (code & 0xFF) in DAMAGE_CODES


class Cursor(sqlite3.Cursor):
    """A cursor of :class:`Connection`: damage met while stepping through rows is
    :class:`JournalDamaged` too (a damaged page is found when it is read, row by row)."""

    def _damaged(self, exc: sqlite3.DatabaseError) -> BaseException:
        connection = self.connection
        return connection.damaged(exc) if isinstance(connection, Connection) else exc

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        """``sqlite3.Cursor.execute``, damage translated."""
        try:
            return super().execute(sql, parameters)
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> Cursor:
        """``sqlite3.Cursor.executemany``, damage translated."""
        try:
            return super().executemany(sql, seq_of_parameters)
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def fetchone(self) -> Any:
        """``sqlite3.Cursor.fetchone``, damage translated."""
        try:
            return super().fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        """``sqlite3.Cursor.fetchmany``, damage translated."""
        try:
            return super().fetchmany(self.arraysize if size is None else size)
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def fetchall(self) -> list[Any]:
        """``sqlite3.Cursor.fetchall``, damage translated."""
        try:
            return super().fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None


class Connection(sqlite3.Connection):
    """The journal's connection (``sqlite3.connect(..., factory=Connection)``): every
    statement goes through a :class:`Cursor`, so damage is :class:`JournalDamaged` wherever it
    is met; :attr:`journal_path` names the file in the message."""

    journal_path: str = "the journal"
    """The file, as the message names it (set once connected)."""

    def damaged(self, exc: sqlite3.DatabaseError) -> BaseException:
        """:class:`JournalDamaged` for damage, else ``exc`` itself. Not logged here: the
        start-up path prints it once (:func:`annad.main.main`), a request's error handler logs
        it at priority crit (:mod:`annad.api.errors`)."""
        return damaged(self.journal_path, exc) if is_damage(exc) else exc

    def cursor(self, factory: Any = None) -> Any:
        """A :class:`Cursor` (or ``factory``'s)."""
        return super().cursor(factory or Cursor)

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        """Run ``sql`` on a new :class:`Cursor` (``sqlite3.Connection.execute`` would make a
        plain one, past the translation)."""
        cursor: Cursor = self.cursor()
        return cursor.execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Cursor:
        """``executemany`` on a new :class:`Cursor`."""
        cursor: Cursor = self.cursor()
        return cursor.executemany(sql, parameters)

    def executescript(self, sql_script: str, /) -> Cursor:
        """``sqlite3.Connection.executescript``, damage translated."""
        try:
            cursor: Cursor = self.cursor()
            return cursor.executescript(sql_script)  # type: ignore[return-value]
        except sqlite3.DatabaseError as exc:
            raise self.damaged(exc) from None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None, /) -> Literal[False]:
        """The transaction's commit (or rollback), damage translated."""
        try:
            return super().__exit__(exc_type, exc, traceback)
        except sqlite3.DatabaseError as error:
            raise self.damaged(error) from None
