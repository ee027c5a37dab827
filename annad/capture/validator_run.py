"""Run a system's own validator on a copy of a file, confined: previews and the judge alike.

The preview (:mod:`annad.preview.validators`) runs validators on the content a step *would*
write; the judge of a captured step (:mod:`annad.capture.validate_content`) on what it *did*
write. Both write the content to a private temporary directory (same base name, so unit names
stay valid) and run the program in the confinement of checks: read-only tree, no network,
no capabilities.
"""

from __future__ import annotations

import os
import posixpath
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from anna_common.protocol.preview import ValidatorResult
from annad.confine.runner import run_confined
from annad.confine.stepenv import SAFE_PATH

if TYPE_CHECKING:
    from annad.confine.credentials import Identity

OUTPUT_CAP = 2000
"""Characters of a validator's output kept."""
TIMEOUT_S = 10.0
"""Wall time of one validator."""


@dataclass(frozen=True, slots=True)
class Validator:
    """One validator: its name, its program and how it is called on a copy."""

    name: str
    program: str
    template: str
    """The command; ``{prog}`` and ``{file}`` are replaced (shell-quoted)."""
    scratch: tuple[str, ...] = ()
    """Throw-away writable directories it needs (sshd checks /run/sshd exists)."""


def find_program(program: str, extra: tuple[str, ...]) -> str | None:
    """A validator's program: in the configured directories first, then the fixed PATH."""
    return shutil.which(program, path=os.pathsep.join([*extra, SAFE_PATH]))


def run_copy(validator: Validator, program: str, path: str, data: bytes, identity: Identity,
             *, root_read: bool, python: str | None) -> ValidatorResult:
    """Write ``data`` (a previewed or observed file) to a private directory as a copy of
    ``path`` and run the validator on it, confined."""
    base = "/var/tmp" if "/tmp" in validator.scratch else None  # not under the scratch
    with tempfile.TemporaryDirectory(prefix="anna-validate-", dir=base) as tmp:
        # the confined validator may be the owner, not root: it must reach the copy (which
        # holds only what the preview shows the person anyway); a capless root reads its own
        # 0600 copy, which no other user can (an observed file may hold a copied secret)
        Path(tmp).chmod(0o700 if root_read else 0o755)
        copy = posixpath.join(tmp, posixpath.basename(path))
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                     0o600 if root_read else 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        command = validator.template.format(prog=shlex.quote(program), file=shlex.quote(copy))
        run = run_confined(command, identity, root_read=root_read, timeout=TIMEOUT_S,
                           max_output=OUTPUT_CAP * 2, cwd=tmp, scratch=validator.scratch,
                           python=python)
    words = run.output.replace(copy, path).strip()[-OUTPUT_CAP:]
    if run.error is not None:
        return ValidatorResult(name=validator.name, target=path, verdict="not checked",
                               output=run.error[:OUTPUT_CAP])
    verdict = "ok" if run.ok else "failed"
    if run.timed_out:
        words = f"timed out after {TIMEOUT_S:g} s"
    return ValidatorResult(name=validator.name, target=path, verdict=verdict, output=words)


__all__ = ["OUTPUT_CAP", "TIMEOUT_S", "Validator", "find_program", "run_copy"]
