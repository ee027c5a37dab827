"""The systems' own validators on a file a captured step really wrote, before it lands.

``visudo -c -f COPY`` for sudoers and its drop-ins, and ``sshd -T -f COPY`` for sshd_config and
its drop-ins: a file its own program rejects is refused (sudo would refuse every command with
a broken sudoers; sshd would not start), and sshd's *effective* configuration — what sshd
itself makes of the file, defaults and spellings resolved — is read with the content rules
(:mod:`anna_common.risk.content`), so ``permitrootlogin YES`` or a setting spelled in a way
the patterns do not know is judged as sshd reads it. The copy is made in a private
directory and the program runs in the confinement of checks
(:func:`annad.capture.validator_run.run_copy`): read-only tree, no network, no capabilities.
sshd runs with a throw-away host key made in the run's own ``/run`` (root's keys are
masked in the confinement, and sshd will not print a configuration without one).
A validator that is not installed (or not configured: the tests' visudo is only found in
``preview_validator_path``) is skipped; the content rules still read the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from annad.capture.validator_run import Validator, find_program, run_copy

if TYPE_CHECKING:
    from annad.confine.credentials import Identity

_EFFECTIVE = ("permitrootlogin", "permitemptypasswords", "hostbasedauthentication",
              "permituserenvironment", "strictmodes", "ignorerhosts")
"""sshd settings whose effective value the content rules judge (``passwordauthentication``
is left out: its default is ``yes``, so every file would show it)."""
_SSHD_T = Validator("sshd -T", "sshd", "mkdir -p /run/sshd && ssh-keygen -q -t ed25519 -N '' "
                    "-f /run/anna-hostkey </dev/null >/dev/null && {prog} -T -h "
                    "/run/anna-hostkey -f {file} > /run/anna-sshd-T && grep -iE "
                    "'^(" + "|".join(_EFFECTIVE) + ") ' /run/anna-sshd-T; "
                    "test -s /run/anna-sshd-T", ("/run",))
_VISUDO = Validator("visudo -c", "visudo", "{prog} -c -f {file}")
_WEAK = re.compile(r"^(permitrootlogin|permitemptypasswords|hostbasedauthentication|"
                   r"permituserenvironment) yes$|^(strictmodes|ignorerhosts) no$", re.M)


@dataclass(frozen=True)
class ContentValidators:
    """How the daemon runs validators on observed content."""

    identity: Identity
    root_read: bool
    extra_path: tuple[str, ...] = ()
    python: str | None = None

    def refusal(self, kind: str, path: str, data: bytes) -> str | None:
        """Why the validator of ``kind`` refuses ``data`` as the new ``path`` (None: it
        accepts it, or there is none)."""
        validator = {"sudoers": _VISUDO, "sshd": _SSHD_T}.get(kind)
        if validator is None:
            return None
        program = find_program(validator.program, self.extra_path)
        if program is None:
            return None
        result = run_copy(validator, program, path, data, self.identity,
                          root_read=self.root_read, python=self.python)
        if result.verdict == "not checked":
            return None
        if result.verdict != "ok":
            return f"{validator.name} rejects the file it would leave [{kind}.validator]"
        if validator is _SSHD_T and _WEAK.search(result.output.lower()):
            return "sshd's effective configuration opens logins to root, empty passwords " \
                "or host-based trust [sshd.effective]"
        return None


__all__ = ["ContentValidators"]
