"""Download, then run: seed 000's "NEVER pipe untrusted input to sh", without the pipe.

``curl -o f URL && sh f``, ``wget -O /tmp/i.sh URL; bash /tmp/i.sh`` and
``curl -O URL/x.sh && chmod +x x.sh && ./x.sh`` run downloaded code exactly like
``curl URL | sh`` does. This module follows files through one command (and, through
:mod:`anna_common.risk.planfetch`, through the steps of one plan): what a downloader or decoder
writes (``-o``, ``-O``, a redirection, ``tee`` fed by it, a ``cp``/``mv`` of such a file, an
archive of one extracted, a ``git clone``) is *fetched*; a shell, ``source``, an interpreter
given it as a script, or the file run as a program, is a hard ban. Downloading data and
reading it (``curl -o x.json URL && jq . x.json``) stays allowed.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.risk import paths
from anna_common.risk.rules.base import Code, Out
from anna_common.risk.rules.code import DOWNLOADERS, is_decoder, untrusted_source
from anna_common.risk.writes import CP_VALUES, write_targets
from anna_common.shell.argv import dest_and_sources, operands, option_values, options
from anna_common.shell.words import Word

if TYPE_CHECKING:
    from anna_common.shell.grammar import SimpleCommand

_STANDARD_BIN = ("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/",
                 "/usr/local/sbin/")
_PATH_DIRS = (*_STANDARD_BIN, "~/.local/bin/", "~/bin/")
_PATH = "PATH:"
"""Prefix of a run recorded by bare name (``x`` runs ``$dir/x`` for the first PATH dir)."""
_ARCHIVERS = frozenset({"tar", "bsdtar", "unzip", "7z", "unrar"})


@dataclass(slots=True)
class Fetched:
    """Files fetched and files run so far (paths as :func:`anna_common.risk.paths.resolve` gives
    them; a directory ends with ``/``), each with the program that fetched or runs it."""

    files: dict[str, str] = field(default_factory=dict)
    """Fetched path → the downloader or decoder behind it."""
    runs: dict[str, str] = field(default_factory=dict)
    """Path run as code → the program that runs it."""
    where: str = ""
    """Appended to the fetcher's name (`` in command_plan[0]``) by plan-level callers."""

    def clash(self) -> tuple[str, str, str] | None:
        """(path, fetcher, runner) of a fetched file that is run, if any."""
        for ran, runner in self.runs.items():
            for got, fetcher in self.files.items():
                if same_file(got, ran):
                    return ran, fetcher, runner
        return None


def same_file(fetched: str, ran: str) -> bool:
    """``ran`` is ``fetched``, lies under a fetched directory, or (when either is relative to a
    working directory Anna cannot see) has the same name."""
    if ran.startswith(_PATH):
        return fetched.startswith(_PATH_DIRS) and posixpath.basename(fetched) == ran[len(_PATH):]
    if fetched.endswith("/"):
        return ran.startswith(fetched) or (paths.is_relative(ran) and
                                           ran.startswith(posixpath.basename(fetched[:-1]) + "/"))
    if fetched == ran:
        return True
    if paths.is_relative(fetched) or paths.is_relative(ran):
        return posixpath.basename(fetched) == posixpath.basename(ran)
    return False


def _url_name(word: Word) -> str | None:
    text = word.text
    if "://" not in text:
        return None
    name = text.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return name if name and "://" not in name else "index.html"


def _fetched_words(cmd: SimpleCommand, fed: bool) -> list[tuple[Word | str, bool]]:
    """(path, is a directory) of what ``cmd`` writes from untrusted input."""
    found: list[tuple[Word | str, bool]] = []
    prog = cmd.program or ""
    if fed:
        found += [(t.word, t.how == "extract") for t in write_targets(cmd)]
    opts = options(cmd.args)
    names = [n for n in (_url_name(w) for w in cmd.args) if n]
    if prog == "curl" and opts & {"-O", "--remote-name", "--remote-name-all", "-J"}:
        found += [(n, False) for n in names]
    if prog == "wget" and not opts & {"-O", "--output-document"}:
        found += [(n, False) for n in names]
    if prog == "git" and cmd.args and cmd.args[0].text == "clone":
        rest = operands(cmd.args[1:])
        if len(rest) >= 2:
            found.append((rest[1], True))
        elif names:
            found.append((names[0].removesuffix(".git"), True))
    return found


def _places(out: Out, item: Word | str) -> list[str]:
    if isinstance(item, str):
        return [posixpath.normpath(item) if out.cwd is None else
                posixpath.join(out.cwd, item)]
    return [p.path for p in out.paths(item)]


def _source_label(out: Out, words: list[Word], seen: Fetched) -> str | None:
    for word in words:
        for place in _places(out, word):
            for got, fetcher in seen.files.items():
                if same_file(got, place):
                    return fetcher
    return None


def _propagate(cmd: SimpleCommand, out: Out, seen: Fetched
               ) -> list[tuple[Word | str, bool, str]]:
    """cp/mv/install/ln of a fetched file, or extracting a fetched archive, fetch again."""
    prog = cmd.program or ""
    if prog in ("cp", "mv", "install", "ln"):
        dest, sources = dest_and_sources(cmd.args, CP_VALUES)
        label = _source_label(out, sources, seen)
        if dest is not None and label is not None:
            return [(dest, False, label), (dest, True, label)]
    if prog in _ARCHIVERS:
        label = _source_label(out, operands(cmd.args), seen)
        if label is not None:
            dirs = [t.word for t in write_targets(cmd) if t.how == "extract"]
            return [(d, True, label) for d in dirs] or [(".", True, label)]
    return []


_RUN_LATER = ("/etc/cron.d/", "/etc/crontab", "/etc/cron.hourly/", "/etc/cron.daily/",
              "/etc/cron.weekly/", "/etc/cron.monthly/", "/etc/anacrontab", "/var/spool/cron/",
              "/var/spool/at/", "/var/spool/anacron/", "/etc/profile", "/etc/bash.bashrc",
              "/etc/zsh/", "/etc/rc.local", "~/.bashrc", "~/.bash_profile", "~/.bash_login",
              "~/.profile", "~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.config/fish/")
"""Files whose content a scheduler or every shell start runs as commands: downloading into
one is ``curl | sh`` on a delay."""


def scheduled_files(cmd: SimpleCommand) -> list[Word]:
    """Files a scheduler takes its commands from: ``crontab FILE``, ``at -f FILE``."""
    if cmd.program == "crontab":
        return [w for w in operands(cmd.args, frozenset({"-u", "-c"})) if w.text != "-"]
    if cmd.program in ("at", "batch"):
        return option_values(cmd.args, "-f", "--file", attached=True)
    return []


def ran_words(cmd: SimpleCommand) -> list[Word]:
    """Files ``cmd`` runs as code: a script given to a shell, ``source`` or an interpreter,
    a scheduler's command file, or the program itself when it is named by a path outside the
    standard directories."""
    found = [c.text for c in cmd.code if c.how == "script" and c.text is not None]
    found += scheduled_files(cmd)
    name = cmd.name
    if name is not None and "/" in name.text and not name.text.startswith(_STANDARD_BIN):
        found.append(name)
    return found


def track(cmd: SimpleCommand, out: Out, seen: Fetched) -> None:
    """Record what ``cmd`` fetches and runs into ``seen``."""
    source = untrusted_source([cmd])
    fetcher = f"{(source or cmd).program or '?'}{seen.where}"
    found = [(item, is_dir, fetcher) for item, is_dir in _fetched_words(cmd, source is not None)]
    for item, is_dir, label in found + _propagate(cmd, out, seen):
        for place in _places(out, item):
            seen.files[place.rstrip("/") + "/" if is_dir else place] = label
    for word in ran_words(cmd):
        for place in _places(out, word):
            seen.runs[place] = cmd.program or "?"
    name = cmd.name
    if name is not None and name.literal and "/" not in name.text and cmd.program:
        # a bare name runs whatever PATH finds first: a file fetched into a PATH directory
        seen.runs[_PATH + name.text] = cmd.program


def fetches(commands: list[SimpleCommand]) -> bool:
    """Whether any of these commands could fetch a file (a downloader, decoder or clone): only
    then is following files worth its cost."""
    return any(c.program in DOWNLOADERS or c.program == "git" or is_decoder(c) for c in commands)


def judge(seen: Fetched, out: Out) -> None:
    """Ban running a file fetched in the same command."""
    for got, fetcher in seen.files.items():
        if got.startswith(_RUN_LATER):
            out.ban(Code.BAN_UNTRUSTED_CODE, f"{fetcher} writes downloaded or decoded text "
                    f"into {got}, which runs it as commands", target=got)
            return
    hit = seen.clash()
    if hit is not None:
        ran, fetcher, runner = hit
        label = ran.replace(paths.UNKNOWN, "$…")
        out.ban(Code.BAN_UNTRUSTED_CODE, f"{runner} runs {label}, which {fetcher} downloaded "
                "or decoded (download, then run)", target=runner)
