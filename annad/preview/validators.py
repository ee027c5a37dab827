"""Validators run on the previewed content of a file — never on the real file.

Chosen by the real path: ``sshd -t -f`` for sshd_config, ``visudo -c -f`` for sudoers,
``systemd-analyze verify`` for unit files, ``findmnt --verify --tab-file`` for fstab,
``bash -n`` for shell start-up files, ``nginx -t -c`` for nginx.conf, and sourcing in bash
for mkinitcpio.conf. The previewed content is written to a private temporary directory
(same base name, so unit names stay valid) and the validator runs in the confinement of
checks: read-only tree, no network, no capabilities. A missing validator is "not checked";
a failing one is "failed" with its own words, which raises the step to HIGH.
"""

from __future__ import annotations

import fnmatch
import shlex
from typing import TYPE_CHECKING

from anna_common.protocol.preview import FileChange, ValidatorResult
from annad.backups.manifest import printable
from annad.capture.validator_run import OUTPUT_CAP, Validator, find_program, run_copy

if TYPE_CHECKING:
    from annad.confine.credentials import Identity

_UNIT_SUFFIXES = (".service", ".socket", ".timer", ".path", ".mount", ".target")


_SSHD = Validator("sshd -t", "sshd", "mkdir -p /run/sshd && {prog} -t -f {file}", ("/run",))
_VISUDO = Validator("visudo -c", "visudo", "{prog} -c -f {file}")
# systemd-analyze makes working directories in /tmp (TMPDIR is not consulted) and /run: it runs
# in a confinement of its own with both throw-away, on a copy kept in /var/tmp
_UNIT = Validator("systemd-analyze verify", "systemd-analyze", "{prog} verify {file}",
                  ("/tmp", "/run"))
_FSTAB = Validator("findmnt --verify", "findmnt", "{prog} --verify --tab-file {file}")
_BASH = Validator("bash -n", "bash", "{prog} -n {file}")
_NGINX = Validator("nginx -t", "nginx", "{prog} -t -c {file}")
_MKINITCPIO = Validator("mkinitcpio config (sourced)", "bash",
                        "{prog} --noprofile --norc -c 'set -e; . \"$1\"' _ {file}")
_RULES: tuple[tuple[str, Validator], ...] = (
    ("*/sshd_config", _SSHD), ("*/sshd_config.d/*.conf", _SSHD),
    ("*/sudoers", _VISUDO), ("*/sudoers.d/*", _VISUDO),
    ("*/fstab", _FSTAB),
    ("*/.bashrc", _BASH), ("*/.bash_profile", _BASH), ("*/.profile", _BASH),
    ("*/bash.bashrc", _BASH), ("/etc/profile", _BASH), ("/etc/profile.d/*.sh", _BASH),
    ("*/nginx.conf", _NGINX), ("/etc/mkinitcpio.conf", _MKINITCPIO),
)


def validator_for(path: str) -> Validator | None:
    """The validator for a real path, or None."""
    for pattern, validator in _RULES:
        if fnmatch.fnmatchcase(path, pattern):
            return validator
    if path.endswith(_UNIT_SUFFIXES) and "/systemd/" in path:
        return _UNIT
    return None


_which = find_program


def overlay_rules(extra_path: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(real path pattern, command with ``{file}``) of the installed validators that run
    inside the preview overlay (where the file shows the previewed content, and its
    includes theirs): the helper runs one on every file a step really changed that
    matches, whatever the command's words said it would write."""
    out: list[tuple[str, str]] = []
    for pattern, validator in _RULES:
        program = _which(validator.program, extra_path)
        if program is None or validator.scratch not in ((), ("/run",)):
            continue  # (the overlay's /run already holds the sshd directory)
        out.append((pattern, validator.template.format(prog=shlex.quote(program),
                                                       file="{file}")))
    return out


def _from_overlay(path: str, ran: tuple[int, str]) -> ValidatorResult | None:
    validator = validator_for(path)
    if validator is None:
        return None
    code, words = ran
    return ValidatorResult(name=validator.name, target=printable(path),
                           verdict="ok" if code == 0 else "failed",
                           output=words.strip()[-OUTPUT_CAP:])


def validate(changes: list[FileChange], contents: dict[str, bytes], identity: Identity, *,
             root_read: bool, extra_path: tuple[str, ...] = (), python: str | None = None,
             ran: dict[str, tuple[int, str]] | None = None) -> list[ValidatorResult]:
    """Validate every created or modified file that has a validator: ``ran`` holds the
    verdicts already made inside the overlay; the rest run here on a private copy."""
    results: list[ValidatorResult] = []
    for item in changes:
        validator = validator_for(item.path)
        if validator is None or item.change == "deleted" or item.size_after is None:
            continue  # no validator, or not a regular file (a unit's .wants/ symlink)
        if ran and item.path in ran:
            done = _from_overlay(item.path, ran[item.path])
            if done is not None:
                results.append(done)
                continue
        program = _which(validator.program, extra_path)
        data = contents.get(item.path)
        if validator is _MKINITCPIO and not root_read:
            # sourcing runs the file's code: only as capless, socketless root, never as a
            # user whose session bus would be in reach
            program = None
        if program is None or data is None:
            why = "the previewed content is too large or unreadable to check"
            if program is None:
                why = "sourced only by the system daemon" if validator is _MKINITCPIO else \
                    f"{validator.program} is not installed"
            results.append(ValidatorResult(name=validator.name, target=item.path,
                                           verdict="not checked", output=why))
            continue
        results.append(run_copy(validator, program, item.path, data, identity,
                                root_read=root_read, python=python))
    return results
