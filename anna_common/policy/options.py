"""Which options an argument word names, the way the program itself parses it.

GNU ``getopt_long`` (and programs built on it: pacman, systemctl, coreutils, patch)
accepts any unambiguous prefix of a long option: ``pacman --remov linux`` *is*
``pacman --remove linux``, and ``--remove`` is documented as the same option as ``-R``.
A policy rule ``argv = ["--remove"]`` must therefore match ``--remov``, ``--rem``,
``--remove=x``, ``-R`` and ``-Rns``; ``argv = ["-R"]`` must match ``--remove`` too.

The knowledge is a table (:data:`TABLE`): per program, whether it takes abbreviations and
its long options with their documented short equivalents. Only options that are the same
option in every context are paired (pacman's ``-s`` is ``--recursive`` after ``-R`` but
``--search`` after ``-S``: it is paired with neither).

This is an interface (:class:`OptionTable`) so that one table of every program's long
options can serve the risk rules, the bans and the policy alike: when
``anna_common/shell/longopts.py`` lands, :data:`TABLE` becomes an adapter over it and the
functions below stay as they are.

A program the table does not know is matched cautiously by deny and ask rules (any
``--x`` that is a prefix of the rule's long option may be it) and strictly by allow rules
(only the word as written).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ProgramOptions:
    """One program's long options."""

    longs: Mapping[str, tuple[str, ...]]
    """Each long option (``--remove``) → its documented short equivalents (``("-R",)``)."""
    abbreviates: bool = True
    """The parser accepts unambiguous prefixes of long options (GNU ``getopt_long``)."""


class OptionTable(Protocol):
    """Where the knowledge of programs' options comes from."""

    def options(self, program: str) -> ProgramOptions | None:
        """``program``'s options (None: not known)."""


def _opts(spec: str, *, abbreviates: bool = True) -> ProgramOptions:
    """``"--remove=-R --sync=-S --needed"`` → a :class:`ProgramOptions`."""
    longs: dict[str, tuple[str, ...]] = {}
    for item in spec.split():
        name, _, shorts = item.partition("=")
        longs[name] = tuple(s for s in shorts.split(",") if s)
    return ProgramOptions(longs, abbreviates)


# only the operations and the global options are paired with a letter: pacman's other
# letters change meaning with the operation (-s, -c, -d, -u, -p, -q …)
_PACMAN = _opts(
    "--database=-D --query=-Q --remove=-R --sync=-S --deptest=-T --upgrade=-U --files=-F "
    "--version=-V --help=-h --dbpath=-b --root=-r --verbose=-v --arch --cachedir --color "
    "--config --debug --gpgdir --hookdir --logfile --noconfirm --confirm "
    "--disable-download-timeout --sysroot --nodeps --assume-installed --dbonly "
    "--noprogressbar --noscriptlet --print --print-format --cascade --nosave --recursive "
    "--unneeded --clean --groups --info --list --quiet --search --sysupgrade --downloadonly "
    "--refresh --needed --ignore --ignoregroup --overwrite --asdeps --asexplicit "
    "--changelog --check --deps --explicit --foreign --native --owns --file --unrequired "
    "--upgrades --machinereadable --regex --check-deps --check-optdeps")
_RECURSIVE_R = "--recursive=-r,-R"
_RM = _opts(f"--force=-f --interactive --one-file-system --no-preserve-root --preserve-root "
            f"{_RECURSIVE_R} --dir=-d --verbose=-v --help --version")
_CHMOD = _opts("--changes=-c --silent=-f --quiet=-f --verbose=-v --no-preserve-root "
               "--preserve-root --reference --recursive=-R --help --version")
_CHOWN = _opts("--changes=-c --silent=-f --quiet=-f --verbose=-v --dereference "
               "--no-dereference=-h --from --no-preserve-root --preserve-root --reference "
               "--recursive=-R --help --version")
_CP = _opts(f"--archive=-a --attributes-only --backup --copy-contents --debug --force=-f "
            f"--interactive=-i --link=-l --dereference=-L --no-clobber=-n "
            f"--no-dereference=-P --preserve --no-preserve --parents {_RECURSIVE_R} "
            f"--reflink --remove-destination --sparse --strip-trailing-slashes "
            f"--symbolic-link=-s --suffix=-S --target-directory=-t --no-target-directory=-T "
            f"--update=-u --verbose=-v --one-file-system=-x --context=-Z --help --version")
_MV = _opts("--backup --exchange --force=-f --interactive=-i --no-clobber=-n --no-copy "
            "--strip-trailing-slashes --suffix=-S --target-directory=-t "
            "--no-target-directory=-T --update=-u --verbose=-v --context=-Z --help --version")
_SYSTEMCTL = _opts(
    "--all=-a --recursive=-r --reverse --after --before --with-dependencies --type=-t "
    "--state --property=-p --value --show-types --job-mode --check-inhibitors "
    "--ignore-inhibitors=-i --dry-run --quiet=-q --no-warn --wait --no-block --no-wall "
    "--no-reload --no-ask-password --kill-whom --kill-value --signal=-s --what --now "
    "--root --image --runtime --preset-mode --force=-f --message --firmware-setup "
    "--boot-loader-menu --boot-loader-entry --reboot-argument --plain --timestamp "
    "--mkdir --marked --read-only --lines=-n --output=-o --full=-l --system --user "
    "--global --host=-H --machine=-M --no-pager --legend --help=-h --version")
_PATCH = _opts(
    "--input=-i --output=-o --directory=-d --strip=-p --backup=-b --reverse=-R "
    "--forward=-N --dry-run --force=-f --batch=-t --silent=-s --quiet=-s --reject-file=-r "
    "--fuzz=-F --ifdef=-D --binary --posix --suffix=-z --prefix=-B --basename-prefix=-Y "
    "--version-control=-V --merge --verbose --unified=-u --context=-c --ed=-e --normal=-n "
    "--remove-empty-files=-E --set-time=-T --set-utc=-Z --get=-g --read-only "
    "--follow-symlinks --no-backup-if-mismatch --backup-if-mismatch --reject-format "
    "--quoting-style --ignore-whitespace=-l --help --version")
_USERDEL = _opts("--force=-f --help=-h --remove=-r --root=-R --prefix=-P --selinux-user=-Z")
_USERMOD = _opts(
    "--append=-a --badname --comment=-c --home=-d --expiredate=-e --inactive=-f --gid=-g "
    "--groups=-G --help=-h --login=-l --lock=-L --move-home=-m --non-unique=-o "
    "--password=-p --prefix=-P --remove=-r --root=-R --shell=-s --uid=-u --unlock=-U "
    "--add-subuids=-v --del-subuids=-V --add-subgids=-w --del-subgids=-W "
    "--selinux-user=-Z")
_GIT = _opts("--work-tree --git-dir --namespace --bare --no-pager=-P --paginate=-p "
             "--exec-path --help --version --no-replace-objects --literal-pathspecs "
             "--config-env", abbreviates=False)
# apt-get and dpkg parse options with their own code, which wants the whole name
_APT = _opts("--yes=-y --assume-yes=-y --purge --auto-remove --allow-remove-essential "
             "--allow-downgrades --allow-change-held-packages --no-install-recommends "
             "--reinstall --simulate=-s --quiet=-q", abbreviates=False)
_DPKG = _opts("--install=-i --remove=-r --purge=-P --unpack --configure --force-all "
              "--root --admindir --instdir --recursive=-R", abbreviates=False)

_KNOWN: dict[str, ProgramOptions] = {
    "pacman": _PACMAN, "rm": _RM, "chmod": _CHMOD, "chown": _CHOWN, "chgrp": _CHOWN,
    "cp": _CP, "mv": _MV, "systemctl": _SYSTEMCTL, "patch": _PATCH, "userdel": _USERDEL,
    "usermod": _USERMOD, "git": _GIT, "apt": _APT, "apt-get": _APT, "dpkg": _DPKG,
}


class _Builtin:
    """The table above (until the shared table of every program's options lands)."""

    def options(self, program: str) -> ProgramOptions | None:
        return _KNOWN.get(program)


TABLE: OptionTable = _Builtin()
"""The table in use."""


def long_names(program: str | None, word: str, *, cautious: bool,
               table: OptionTable = TABLE) -> tuple[str, ...]:
    """The long options ``word`` (``--rem``, ``--remove=x``) may be, ``=value`` removed.

    Known program: the option itself when written in full, else the one it abbreviates
    (cautious: every option it could abbreviate, in case the table is short of one).
    Unknown program: the word as written (the caller matches prefixes when cautious)."""
    name = word.split("=", 1)[0]
    known = table.options(program) if program else None
    if known is None or name in known.longs:
        return (name,)
    if not known.abbreviates or len(name) < 3:
        return (name,)
    found = tuple(n for n in known.longs if n.startswith(name))
    if len(found) == 1 or (cautious and found):
        return found
    return (name,)


def equivalents(program: str | None, option: str, table: OptionTable = TABLE
                ) -> frozenset[str]:
    """``option`` (``--remove`` or ``-R``) and every option the program documents as the
    same (``-R``; ``-r`` and ``-R`` for ``rm --recursive``)."""
    known = table.options(program) if program else None
    out = {option}
    if known is None:
        return frozenset(out)
    if option.startswith("--"):
        out.update(known.longs.get(option, ()))
    else:
        for name, shorts in known.longs.items():
            if option in shorts:
                out.add(name)
                out.update(shorts)
    return frozenset(out)


def names(program: str | None, word: str, *, cautious: bool,
          table: OptionTable = TABLE) -> frozenset[str]:
    """Every option name ``word`` stands for, in all its documented spellings: ``-Rns`` →
    ``-R``, ``-n``, ``-s`` and their long forms; ``--rem`` → ``--remove`` and ``-R``."""
    if word.startswith("--") and len(word) > 2:
        out: set[str] = set()
        for name in long_names(program, word, cautious=cautious, table=table):
            out |= equivalents(program, name, table)
        return frozenset(out)
    if word.startswith("-") and len(word) > 1 and not word[1].isspace():
        out = set()
        for letter in word[1:]:
            out |= equivalents(program, "-" + letter, table)
        return frozenset(out)
    return frozenset()


def abbreviation_of(program: str | None, word: str, option: str,
                    table: OptionTable = TABLE) -> bool:
    """For a program the table does not know (or that takes abbreviations): ``word`` may be
    an abbreviation of the long ``option`` (``--rem`` of ``--remove``)."""
    known = table.options(program) if program else None
    if known is not None and not known.abbreviates:
        return False
    name = word.split("=", 1)[0]
    return option.startswith("--") and name.startswith("--") and len(name) >= 3 and \
        option.startswith(name)
