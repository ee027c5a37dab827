"""The content rules on what a command's own text writes, and Anna's configuration.

When the classifier can know what a command puts into a file that runs code or grants
(``echo 'alias ls="rm -rf ~"' >> ~/.bash_aliases``, a tmpfiles.d line through a heredoc),
it reads it with the content rules the daemon's judge uses on what a step really wrote
(:mod:`anna_common.risk.content`): one set of rules, two places that know the text. Any
write to Anna's own configuration (``/etc/anna/**``, annad's unit and drop-ins) is banned,
whatever the program and whatever the text: a plan never changes what judges plans.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING

from anna_common.risk.content.kinds import kind_of
from anna_common.risk.content.links import link_findings
from anna_common.risk.content.meaning import Reader, judge_text
from anna_common.risk.content.settings import WHAT
from anna_common.risk.pathglob import lead
from anna_common.risk.rules.base import Code, Out
from anna_common.risk.rules.content import written_by

if TYPE_CHECKING:
    from anna_common.risk.paths import Resolved
    from anna_common.risk.writes import WriteTarget
    from anna_common.shell.grammar import Analysis, SimpleCommand

ANNA_CONFIG = "/etc/anna"
_WHOLE_TREE = frozenset({"chmod", "chown", "delete", "move-source", "move", "shred"})
_ANNA_SAMPLES = ("/etc/anna", "/etc/anna/annad.toml", "/etc/anna/policy.toml",
                 "/etc/anna/recipes.d/x.toml", "/etc/systemd/system/annad.service.d/x.conf",
                 "/etc/systemd/system/annad.service")


def touches_anna_config(place: Resolved, target: WriteTarget) -> bool:
    """Whether writing ``place`` (as ``target`` writes it) can change Anna's configuration:
    the path itself, a pattern that can name it, or a tree above it written whole."""
    path = place.path
    if kind_of(path) == "anna":
        return True
    if place.glob:
        own = lead(path)  # a sample the glob matches starts with its literal start
        if any(s.startswith(own) and fnmatch.fnmatchcase(s, path) for s in _ANNA_SAMPLES):
            return True
    # a tree above it changed whole (``chown -R u /etc``); what an unpack or a copy adds
    # there is the capture's to see, path by path
    return target.recursive and target.how in _WHOLE_TREE and (
        path == "/" or ANNA_CONFIG.startswith(path.rstrip("/") + "/"))


def meaning_writes(cmd: SimpleCommand, target: WriteTarget, place: Resolved,
                   analysis: Analysis, out: Out) -> bool:
    """Judge one write target by what its content means; True when it was banned."""
    if out.once(("anna config", place, target.how, target.recursive), touches_anna_config,
                place, target):
        out.ban(Code.BAN_ANNA_CONFIG, "it changes Anna's own "
                f"configuration ({place.path}): only the administrator or annactl does that, "
                "never a plan", target=place.path)
        return True
    if place.glob:
        return False
    kind = kind_of(place.path)
    if kind is None or kind in WHAT:
        return False  # nothing to read, or the security settings (judged by hardening)
    if kind == "trust":  # whose key or certificate it is, no rule can read: HIGH always
        out.high(Code.SECURITY_CONFIG, f"changes {place.path}, whom the machine trusts to "
                 "sign packages or certificates [trust.anchor]", target=place.path)
        return False
    if target.how == "link":
        findings = [f for source in _link_sources(cmd, target)
                    for f in link_findings(place.path, source, Reader(ctx=out.ctx))]
    elif target.how in ("write", "append", "copy", "move", "link"):
        texts = written_by(cmd, target.word, analysis, out) or []
        findings = [f for text in texts
                    for f in judge_text(kind, place.path, text, Reader(ctx=out.ctx))]
    else:
        return False
    for finding in findings:
        message = f"writes into {place.path} what {finding.why} [{finding.rule}]"
        if finding.banned:
            out.ban(Code(finding.code) if finding.code in Code.__members__ else
                    Code.BAN_UNTRUSTED_CODE, message, target=place.path)
            return True
        out.high(Code(finding.code) if finding.code in Code.__members__ else
                 Code.SECURITY_CONFIG, message, target=place.path)
    return False


def _link_sources(cmd: SimpleCommand, target: WriteTarget) -> list[str]:
    """The literal targets ``ln -s SOURCE… DEST`` links to."""
    words = [w for w in cmd.args if w is not target.word and not w.text.startswith("-")]
    return [w.text for w in words if w.literal]


__all__ = ["meaning_writes", "touches_anna_config"]
