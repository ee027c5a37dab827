"""``annactl audit verify``: the daemon recomputes its journal's hash chain and checks every
stored plan against it (``GET /v1/audit/verify``).

Exit 0 when the chain holds, :attr:`ExitStatus.AUDIT_BROKEN` (13) when a row was altered or
removed, with the first row that does not match. To check a copy of a journal moved aside
(a damaged one), run ``annad --check-journal FILE`` as its owner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from annactl.ui.console import Consoles


def verify(consoles: Consoles, *, as_json: bool) -> int:
    """Print the daemon's verdict on its journal; the exit status says it too."""
    from annactl.core.config import load_settings
    from annactl.core.daemon_client import connect
    from annactl.ui.console import emit_json

    with consoles.err.status("Checking the journal…") as spinner:
        def progress(rows: int) -> None:
            spinner.update(f"Checking the journal: {rows:,} event rows so far…")

        report = connect(load_settings()).audit_verify(progress)  # no model is needed
    status = ExitStatus.SUCCESS if report.ok else ExitStatus.AUDIT_BROKEN
    if as_json:
        emit_json(consoles, {"status": "ok" if report.ok else "broken",
                             **report.model_dump(mode="json")})
        return status
    if report.ok:
        consoles.out.print(f"The journal verifies: {report.message} ({report.rows} rows).",
                           markup=False)
    else:
        consoles.err.print(f"The journal does not verify: {report.message}"
                           + (f" (first bad row: {report.first_bad_row})"
                              if report.first_bad_row is not None else "")
                           + ". Plans it touches are refused; see docs/operations.md, "
                           "\"A damaged journal\".", markup=False)
    return status
