"""Language and desktop package managers (pip, npm, gem, cargo, flatpak, ...).

Queries read; installs into your own prefix (``--user``, pipx, cargo, local npm)
are LOW; system-wide installs are MEDIUM; overriding the distribution's package
protection, unsigned flatpaks and anything that compiles and runs code are HIGH.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out, help_only

if TYPE_CHECKING:
    from anna_common.shell.grammar import SimpleCommand


_LANGUAGE_READS = frozenset({"list", "show", "freeze", "search", "info", "outdated", "view", "ls",
                             "check", "remote-ls", "remotes", "inspect", "why", "help", "doctor",
                             ""})
_CONFIG_CHANGES = frozenset({"set", "unset", "edit", "delete", "rm", "add", "remove", "--set",
                             "--unset", "--add", "--append", "--prepend", "--remove",
                             "--remove-key", "--edit", "-e", "fix", "--system", "--global"})


def _language_reads(verb: str, words: list[str]) -> bool:
    """Query verbs; ``config``/``audit`` only without a changing sub-verb (``pip config set``,
    ``npm audit fix``); ``version`` only alone (``npm version patch`` bumps and tags)."""
    if verb in _LANGUAGE_READS:
        return True
    rest = words[words.index(verb) + 1:] if verb in words else []
    if verb in ("config", "audit"):
        return not set(rest) & _CONFIG_CHANGES and not any(
            r.startswith(("--set", "--add", "--unset", "--remove")) for r in rest)
    return verb == "version" and not [r for r in rest if not r.startswith("-")]


def language_packages(cmd: SimpleCommand, out: Out) -> None:
    """pip/pipx/npm/gem/cargo/flatpak: queries read; installs change software."""
    prog = cmd.program or ""
    words = [w.text for w in cmd.args]
    verb = next((w for w in words if not w.startswith("-")), "")
    if prog in ("cpan", "cpanm") and not verb and not help_only(cmd):
        out.high(Code.INTERACTIVE_SHELL, f"{prog} without arguments opens its shell, which runs "
                 "commands", target=prog)
        return
    if prog == "go" and verb in ("run", "generate", "tool"):
        out.high(Code.SCRIPT_FILE, f"go {verb} compiles and runs code Anna cannot see",
                 target="go")
        return
    if help_only(cmd) or _language_reads(verb, words):
        out.read_only()
        return
    if prog == "flatpak" and {"--no-gpg-verify", "--no-verify"} & set(words):
        out.high(Code.UNTRUSTED_BUILD, "flatpak without signature checks", system=True,
                 target=verb)
        return
    if "--break-system-packages" in words:
        out.high(Code.PACKAGE_CHANGE, f"{prog} overrides the distribution's package protection",
                 system=True, target=verb)
        return
    source = _other_source(prog, words)
    if source and cmd.privileged:
        out.high(Code.UNTRUSTED_BUILD, f"{prog} {verb} as root from {source[:60]}: its build "
                 "and install code runs as root, from outside the distribution", system=True,
                 target=verb)
        return
    user = "--user" in words or prog in ("pipx", "cargo") or (prog == "npm" and not {"-g",
                                                                                     "--global"}
                                                               & set(words)) or \
        _into_home(cmd, out)
    if user and not cmd.privileged:
        out.low(Code.PACKAGE_CHANGE, f"{prog} {verb} changes your own packages", target=verb)
    else:
        out.medium(Code.PACKAGE_CHANGE, f"{prog} {verb} changes system-wide packages",
                   system=True, target=verb)


_PIP_PLACES = ("--target", "-t", "--prefix", "--root")
"""pip options naming where it installs."""


def _into_home(cmd: SimpleCommand, out: Out) -> bool:
    """pip installs only below the caller's home (``--target ~/site``, ``-t ~/x``): every
    place it names resolves to ``~/…``; one it cannot resolve is not the home."""
    if not (cmd.program or "").startswith("pip"):
        return False
    places = []
    args = cmd.args
    for index, word in enumerate(args):
        name, eq, _ = word.text.partition("=")
        if word.text in _PIP_PLACES and index + 1 < len(args):
            places.append(args[index + 1])
        elif eq and name in _PIP_PLACES:
            return False  # ``--target=~/x``: the tilde is not expanded, a relative name
    if not places:
        return False
    resolved = [r for word in places for r in out.paths(word)]
    return bool(resolved) and all(r.path.startswith("~/") and not r.glob and ".." not in
                                  r.path.split("/") for r in resolved)


_PIP_INDEX = ("--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--trusted-host")


def _other_source(prog: str, words: list[str]) -> str | None:
    """Where pip installs from besides PyPI's signed-by-nobody default: another index, a
    URL, a VCS checkout or a local directory (``setup.py`` runs as whoever installs)."""
    if not prog.startswith("pip"):
        return None
    for index, word in enumerate(words):
        name = word.split("=", 1)[0]
        if name in _PIP_INDEX:
            value = words[index + 1] if index + 1 < len(words) else ""
            return word if "=" in word else f"{word} {value}"
        if "://" in word or word.startswith(("git+", "hg+", "svn+", "bzr+", "/", "./", "../")):
            return word
    return None
