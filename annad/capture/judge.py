"""Judging what a step really changed, before any of it lands.

The person approved a step at a tier; the change set observed in its capture
(:mod:`annad.capture.layers`) is judged again with Anna's own rules and the policy, on
the real paths: each change is spelled as the plain command that would make it
(``tee -- PATH`` for a file written, ``rm -rf -- PATH`` for a deletion, ``chmod MODE``
for a setuid bit, ``setcap``/``setfacl`` for a file capability or an ACL the step set
(:mod:`annad.capture.judge_xattrs`), ``ln -s`` for a link…) and assessed by
:func:`anna_common.risk.assess.assess`
— so the secret, persistence, identity, boot and system-path classifiers are the same ones
that judged the plan, now on paths the kernel resolved rather than words bash had yet to
expand. What a file that governs access or runs code *says* is judged as well
(:mod:`annad.capture.content`: the content rules the classifier uses, and the systems' own
validators). A change is refused when it is banned, its content is banned, above the
approved tier, denied by the policy, inside Anna's own state or configuration, a device
node, or — when the person saw a complete file
preview of the step — not exactly a change the preview showed (a path it did not show, other
content, mode, owner or link target: :mod:`annad.capture.versus_preview`).
"""

from __future__ import annotations

import os
import posixpath
import shlex
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.levels import RiskLevel
from anna_common.risk import paths
from anna_common.risk.assess import assess
from anna_common.risk.rules.rcappend import RC_FILES
from annad.capture import content, judge_xattrs, versus_preview

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from anna_common.protocol.preview import FileChange
    from anna_common.risk.rules.base import AssessContext
    from annad.capture.layers import Change
    from annad.capture.validate_content import ContentValidators

MAX_SHOWN = 20
"""Refused changes named in the event (the rest are counted)."""
SETID = stat.S_ISUID | stat.S_ISGID
RC_NAMES = frozenset(posixpath.basename(f) for f in RC_FILES)
"""File names whose appended line may be judged by the line (the rules check the home)."""


@dataclass
class Verdict:
    """The judgement of one change set."""

    refused: list[str] = field(default_factory=list)
    """Why, one line per refused change (empty: everything may land)."""
    tier: RiskLevel = RiskLevel.INFO
    """The highest tier any change was judged at."""
    shown: list[str] = field(default_factory=list)
    """The observed change set, one line per change (for the event and the journal)."""


@dataclass(frozen=True)
class Approval:
    """What the person approved and on which machine it runs."""

    tier: RiskLevel
    system: bool
    ctx: AssessContext
    state_dir: str
    """Anna's state (journal, backups): a change there is never a step's to make."""
    previewed: Mapping[str, FileChange] | None = None
    """What the preview showed the step change, by exact path
    (:func:`annad.capture.versus_preview.shown_by_key`; None: no complete file preview)."""
    policy: Callable[[str], str | None] | None = None
    """Why the policy denies a command (None: it does not)."""
    validators: ContentValidators | None = None
    """The systems' own validators (visudo, sshd) on observed content (None: none run)."""
    own_config: tuple[str, ...] = ()
    """Anna's configuration where this daemon reads it (its TOML, the policy, the recipes),
    beside ``/etc/anna``: never a step's to change."""


def describe(change: Change) -> str:
    """One line for a change: what and where."""
    what = {"file": "writes", "dir": "makes directory", "symlink": "links", "delete": "deletes",
            "fifo": "makes FIFO", "device": "makes DEVICE", "socket": "makes socket"}
    extra = f" -> {change.link}" if change.link is not None else ""
    mode = f" mode {change.mode:04o} owner {change.uid}:{change.gid}" if \
        change.kind not in ("delete",) else ""
    return f"{what[change.kind]} {os.fsencode(change.path).decode('utf-8', 'backslashreplace')}"\
        f"{extra}{mode}"


def _commands(change: Change, system: bool) -> list[str]:
    """The plain commands that make ``change``, as the rules know them."""
    path = shlex.quote(change.path)
    sudo = "sudo " if system else ""
    if change.kind == "delete":
        tree = os.path.isdir(change.path) and not os.path.islink(change.path)  # noqa: PTH112, PTH114
        return [f"{sudo}rm {'-rf' if tree else '-f'} -- {path}"]
    if change.kind == "symlink":
        return [f"{sudo}ln -sfn -- {shlex.quote(change.link or '')} {path}"]
    first = {"dir": f"{sudo}mkdir -p -- {path}", "fifo": f"{sudo}mkfifo -- {path}"}.get(
        change.kind, f"{sudo}tee -- {path}")
    line = _rc_line(change)
    if line is not None:  # one line appended to an rc file: judged by the line, as planned
        first = f"{sudo}printf '%s\\n' {shlex.quote(line)} >> {path}"
    out = [first]
    if change.mode & SETID:
        out.append(f"{sudo}chmod {change.mode:04o} -- {path}")
    return out + judge_xattrs.commands(change, sudo)


def _rc_line(change: Change) -> str | None:
    """The one line a file change appends to an rc file (:mod:`annad.capture.appended`)."""
    if change.kind != "file" or change.mode & SETID or not change.source or \
            posixpath.basename(change.path) not in RC_NAMES:
        return None
    from annad.capture.appended import appended_line

    return appended_line(change.path, change.source)


def _special(change: Change, approval: Approval, owner: int,
             names: versus_preview.NamePairing | None = None) -> str | None:
    """Refusals no rule spells: Anna's state, devices, ownership given away, preview."""
    if change.path == approval.state_dir or change.path.startswith(
            approval.state_dir.rstrip("/") + "/"):
        return "it is inside Anna's own state (journal and backups)"
    if any(change.path == p or change.path.startswith(p.rstrip("/") + "/")
           for p in approval.own_config):
        return "it is Anna's own configuration: only the administrator or annactl changes " \
            "it, never a plan [anna.own-config]"
    if change.kind == "device":
        return "it makes a device node (a way to the disk below every file)"
    if not approval.system and change.kind != "delete" and change.uid not in (owner, -1):
        return f"it gives the file to uid {change.uid}"
    # the preview overlays the whole writable tree: its silence about a path is evidence
    if approval.previewed is not None:
        return versus_preview.refusal(change, approval.previewed,
                                      owner=None if approval.system else owner, names=names)
    return None


def judge(changes: list[Change], approval: Approval, owner: int) -> Verdict:
    """Judge ``changes`` against ``approval``; see the module text."""
    verdict = Verdict(shown=[describe(c) for c in changes])
    assessed: dict[str, tuple[RiskLevel, bool, str]] = {}
    names = versus_preview.NamePairing({versus_preview.key(c.path) for c in changes})
    changed = {c.path: c for c in changes}
    for change in changes:
        why = _special(change, approval, owner, names)
        if why is None:
            tier, why = content.refusal(change, tier=approval.tier, ctx=approval.ctx,
                                        owner=owner, changed=changed,
                                        validators=approval.validators)
            verdict.tier = max(verdict.tier, tier)
        if why is None:
            why = _by_rules(change, approval, assessed, verdict)
        if why is not None:
            verdict.refused.append(f"{describe(change)}: {why}")
    return verdict


def _representative(change: Change) -> bool:
    """Whether a new file's own name matters to the rules (else its directory speaks for
    it: 5,000 files unpacked in one directory are judged once, not 5,000 times)."""
    path = change.path
    return change.kind != "file" or bool(change.mode & SETID) or \
        bool(judge_xattrs.JUDGED & change.xattrs.keys()) or paths.is_secret(path) or \
        paths.is_persistence(path) or paths.is_sensitive_etc(path) or paths.is_boot(path) or \
        paths.is_system(path) or path in paths.IDENTITY_DB


def _by_rules(change: Change, approval: Approval,
              assessed: dict[str, tuple[RiskLevel, bool, str]], verdict: Verdict) -> str | None:
    key = change.path if _representative(change) else \
        posixpath.join(posixpath.dirname(change.path), "*")
    commands = _commands(change, approval.system)
    for command in commands:
        memo = command if key == change.path else f"{change.kind}:{key}"
        if memo not in assessed:
            found = assess(command, approval.ctx)
            denied = approval.policy(command) if approval.policy is not None else None
            why = denied or (found.reasons[0] if found.reasons else "")
            assessed[memo] = (found.risk, found.banned or denied is not None, why)
        risk, banned, why = assessed[memo]
        verdict.tier = max(verdict.tier, risk)
        if banned:
            return f"refused by the rules or the policy ({why})"
        if risk > approval.tier:
            return f"{risk} (approved: {approval.tier}): {why}"
    return None
