"""Package managers' hook, configuration and trust options: HIGH, or banned (issue 34).

A package manager runs as root, live (:mod:`annad.execution.livekinds`): nothing captures
what it does, and it runs the programs its configuration names. So every option that hands
apt, dpkg, rpm, dnf/yum or zypper

- a program to run (apt's ``DPkg::Pre-Invoke``, ``APT::Update::Pre-Invoke``,
  ``Dir::Bin::dpkg``; dpkg's ``--pre-invoke``, ``--status-logger``; rpm's ``--pipe``, a
  ``%(…)`` or ``%{lua:…}`` macro in ``--eval`` or ``--define``; dnf's ``pluginpath``),
- another configuration, root, database or repository (``-c FILE``, ``--config``,
  ``Dir::Etc``, ``--root``, ``--dbpath``, ``--repofrompath``, ``--plus-repo``),
- or weaker trust (``AllowUnauthenticated``, ``--nogpgcheck``, ``gpgcheck=0``,
  ``--no-gpg-checks``, ``--force-bad-verify``),

is HIGH with the reason; a setting Anna does not know to be harmless is HIGH too (an
allowlist: ``-o Acquire::Retries=3`` and ``Dpkg::Options::=--force-confold`` stay as they
were). A program the manager would run from a place another user can write (``/tmp``, a
home) is banned: root would run whatever that user put there. The command a hook runs is
judged as a command of its own, so its bans hold too. pacman's own options are
:func:`anna_common.risk.rules.packages.foreign_options`. The environment variables that
name another configuration (``APT_CONFIG``, ``RPM_CONFIGDIR``, ``ZYPP_CONF``,
``DPKG_FORCE``…) are :data:`CONFIG_VARIABLES`, judged with every assignment.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING

from anna_common.risk import paths
from anna_common.risk.rules.base import AssessContext, Code, Out, help_only
from anna_common.risk.rules.code import unknown_program_signals
from anna_common.risk.rules.pmrpm import DNF, dnf, rpm, zypper
from anna_common.risk.rules.pmscan import (
    Given,
    Grammar,
    config,
    hook,
    program,
    root_option,
    scan,
    trust,
    unknown_option,
)
from anna_common.shell.grammar import analyse

if TYPE_CHECKING:
    from anna_common.shell.grammar import SimpleCommand

APT = frozenset({"apt", "apt-get", "aptitude", "nala"})

CONFIG_VARIABLES = {
    "APT_CONFIG": "apt reads another configuration (its hooks run as root)",
    "RPM_CONFIGDIR": "rpm reads its macros from another place (a macro can run a shell)",
    "ZYPP_CONF": "zypper reads another configuration",
    "DPKG_FORCE": "dpkg forces past its own checks",
    "DPKG_ADMINDIR": "dpkg uses another package database",
    "DPKG_ROOT": "dpkg installs into another root",
}
"""Environment variables that give a package manager another configuration."""

# ------------------------------------------------------------------------------------ apt

_APT_GRAMMAR = Grammar(short={"o": "--option", "c": "--config-file", "t": "--target-release",
                              "a": "--host-architecture"},
                       valued=frozenset({"--option", "--config-file", "--target-release",
                                         "--host-architecture", "--default-release"}))
_APT_RUNS = ("*invoke*", "dir::bin*", "dpkg::pre-install-pkgs*", "dpkg::tools*", "dpkg::path",
             "*proxy-auto-detect*", "*proxyautodetect*", "*gpgvcommand*", "apt::solver*",
             "apt::planner*", "*::exec*", "*::command*")
"""Settings whose value is a program apt (or dpkg under it) runs as root."""
_APT_PROGRAM_PATHS = ("dir::bin*", "dpkg::path")
"""Of those, the ones whose value is a path (or a ``PATH``), not a command line."""
_APT_TRUST = ("*allowunauthenticated*", "*allowinsecure*", "*allowdowngradetoinsecure*",
              "*allowweak*", "*check-valid-until*", "*check-date*", "*verify-peer*",
              "*verify-host*", "*gpgv*", "*trusted*", "*force-yes*", "*::cainfo*",
              "*::sslcert*", "*::capath*", "apt::sandbox*", "debug::nolocking*",
              "*allow-remove-essential*", "*allowremoveessential*")
"""Settings that change what apt trusts (signatures, certificates, locks, its sandbox)."""
_APT_HARMLESS = ("acquire::retries", "acquire::*::timeout", "acquire::languages",
                 "acquire::forceipv4", "acquire::forceipv6", "acquire::*::pipeline-depth",
                 "acquire::queue-mode", "acquire::*::no-cache", "acquire::*::proxy",
                 "acquire::*::proxy::*", "acquire::*::dl-limit", "acquire::pdiffs",
                 "acquire::gzipindexes", "apt::install-recommends", "apt::install-suggests",
                 "apt::get::assume-yes", "apt::get::fix-missing", "apt::get::fix-broken",
                 "apt::get::show-upgraded", "apt::get::purge", "apt::get::autoremove",
                 "apt::get::download-only", "apt::get::simulate", "apt::get::list-cleanup",
                 "apt::get::only-source", "apt::get::assume-no", "apt::color",
                 "apt::keep-downloaded-packages", "binary::*::apt::keep-downloaded-packages",
                 "apt::status-fd", "apt::default-release", "apt::acquire::retries",
                 "apt::periodic::*", "apt::architectures", "apt::cmd::*", "apt::quiet",
                 "dpkg::use-pty", "dpkg::progress", "dpkg::progress-fancy",
                 "dpkg::lock::timeout", "debug::*", "quiet", "aptitude::cmdline::*")
"""Settings that change how apt talks or shows, not what it runs or trusts."""
_DPKG_HARMLESS = frozenset({"confold", "confnew", "confdef", "confmiss", "confask", "help"})
"""dpkg ``--force-…`` things that only say how to treat a changed configuration file (the
everyday automation idiom, also as ``apt -o Dpkg::Options::=--force-confold``)."""


def _dpkg_harmless(option: str) -> bool:
    """``--force-confold``, ``--force-confdef,confold``, ``--no-triggers``: harmless."""
    if option == "--no-triggers":
        return True
    things = option.removeprefix("--force-").split(",") if option.startswith("--force-") \
        else [""]
    return all(t in _DPKG_HARMLESS for t in things)


def _like(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def apt(cmd: SimpleCommand, out: Out) -> None:
    """apt, apt-get, aptitude, nala: ``-o`` settings, ``-c`` files and trust flags."""
    prog = cmd.program or "apt"
    given, unknown = scan(cmd.args, _APT_GRAMMAR)
    if unknown:
        unknown_option(out, prog)
    for opt in given:
        if opt.name == "--option":
            _apt_setting(out, prog, opt)
        elif opt.name == "--config-file":
            config(out, prog, opt, "reads another configuration (its hooks run as root)")
        elif opt.name in ("--allow-unauthenticated", "--allow-insecure-repositories",
                          "--force-yes", "--allow-untrusted", "--allow-remove-essential"):
            trust(out, prog, opt.name, "installs what the signatures or apt's own checks "
                   "would refuse")


def _apt_setting(out: Out, prog: str, opt: Given) -> None:
    if opt.value is None or not opt.value.literal:
        unknown_option(out, prog)
        return
    raw_name, eq, value = opt.value.text.partition("=")
    name = raw_name.strip().lower().rstrip(":")
    shown = f"-o {opt.value.text[:80]}"
    if not eq:
        return  # apt refuses a setting without '=' and runs nothing
    if name == "dpkg::options":
        if not _dpkg_harmless(value.strip()):
            out.high(Code.UNTRUSTED_BUILD, f"{prog} {shown}: hands dpkg an option that can "
                     "run a program or skip its checks", system=True, target=raw_name)
        return
    if _like(name, _APT_PROGRAM_PATHS):
        program(out, prog, shown, value.split(":") if name == "dpkg::path" else [value])
    elif _like(name, _APT_RUNS):
        hook(out, prog, shown, value)
    elif _like(name, _APT_TRUST):
        trust(out, prog, shown, "changes what apt trusts")
    elif name == "dir" or name.startswith("dir::"):
        out.high(Code.UNTRUSTED_BUILD, f"{prog} {shown}: reads its configuration, sources or "
                 "state from another place", system=True, target=raw_name)
    elif not _like(name, _APT_HARMLESS):
        out.high(Code.UNTRUSTED_BUILD, f"{prog} {shown}: a setting Anna does not know to be "
                 "harmless; it can make apt run a program as root", system=True,
                 target=raw_name)


# ----------------------------------------------------------------------------------- dpkg

_DPKG_GRAMMAR = Grammar(short={}, valued=frozenset({
    "--pre-invoke", "--post-invoke", "--status-logger", "--admindir", "--instdir", "--root",
    "--log", "--status-fd", "--path-exclude", "--path-include", "--debug"}))
_DPKG_OWN = {"--admindir": ("/var/lib/dpkg",), "--instdir": ("/",), "--root": ("/",)}


def dpkg(cmd: SimpleCommand, out: Out) -> None:
    """dpkg: hooks, another database or root, and ``--force-…`` past its checks."""
    given, unknown = scan(cmd.args, _DPKG_GRAMMAR)
    if unknown:
        unknown_option(out, "dpkg")
    for opt in given:
        if opt.name in ("--pre-invoke", "--post-invoke", "--status-logger"):
            hook(out, "dpkg", opt.name, opt.value.text if opt.value is not None and
                 opt.value.literal else None)
        elif opt.name in _DPKG_OWN:
            root_option(out, "dpkg", opt, _DPKG_OWN[opt.name])
        elif opt.name.startswith("--force-") and not _dpkg_harmless(opt.name):
            trust(out, "dpkg", opt.name, "forces past dpkg's own checks")
        elif opt.name == "--no-debsig":
            trust(out, "dpkg", opt.name, "does not verify package signatures")


# ------------------------------------------------------------------------------------ apk

_APK_GRAMMAR = Grammar(short={"X": "--repository", "p": "--root"}, valued=frozenset({
    "--repository", "--repositories-file", "--keys-dir", "--root", "--cache-dir",
    "--arch"}))
_APK_OWN = {"--root": ("/",), "--keys-dir": ("/etc/apk/keys",),
            "--repositories-file": ("/etc/apk/repositories",)}


def apk(cmd: SimpleCommand, out: Out) -> None:
    """apk: another key directory, repositories file or root; untrusted or forced installs."""
    given, unknown = scan(cmd.args, _APK_GRAMMAR)
    if unknown:
        unknown_option(out, "apk")
    for opt in given:
        if opt.name in _APK_OWN:
            root_option(out, "apk", opt, _APK_OWN[opt.name])
        elif opt.name == "--repository":
            trust(out, "apk", opt.name, "installs from a repository the system does not list")
        elif opt.name in ("--allow-untrusted", "--force-overwrite", "--force-broken-world",
                          "--force-non-repository", "--force-old-apk"):
            trust(out, "apk", opt.name, "installs what the signatures or apk's own checks "
                  "would refuse")


_ALTERNATIVES_READ = frozenset({"--display", "--query", "--list", "--get-selections",
                                "--help", "--version"})


def alternatives(cmd: SimpleCommand, out: Out) -> None:
    """update-alternatives / alternatives: ``--install LINK NAME PATH PRIO`` and ``--set NAME
    PATH`` make PATH what ``editor``, ``sh`` or ``java`` runs — for root too: HIGH, and banned
    when another user can write PATH."""
    prog = cmd.program or "update-alternatives"
    texts = [w.text if w.literal else None for w in cmd.args]
    verb = next((t for t in texts if t is None or (t.startswith("--") and t not in (
        "--quiet", "--verbose", "--skip-auto", "--force"))), None)
    if verb in _ALTERNATIVES_READ:
        out.read_only()
        return
    at = texts.index(verb) if verb in texts else 0
    target = {"--install": 3, "--set": 2}.get(verb or "")
    if target is not None and at + target < len(texts) and texts[at + target] is not None:
        program(out, prog, verb or "", [texts[at + target] or ""])
        return
    if verb in ("--auto", "--remove", "--remove-all", "--config", "--all"):
        out.medium(Code.SYSTEM_WRITE, f"{prog} {verb} chooses among the programs already "
                   "registered for a name", system=True, target=verb)
        return
    out.high(Code.SYSTEM_WRITE, f"{prog} {verb or '…'} changes which program a command name "
             "runs, for root too", system=True, target=verb or prog)


_KEY_READS = frozenset({"list", "finger", "fingerprint", "export", "exportall", "--help"})


def trust_tools(cmd: SimpleCommand, out: Out) -> None:
    """Tools that add what root will install from or trust: ``add-apt-repository`` (a
    repository and its key), ``apt-key add/adv``, and ``rpmbuild`` (a spec file's scripts
    run): HIGH."""
    prog = cmd.program or ""
    words = [w.text for w in cmd.args]
    verbs = [w for w in words if not w.startswith("-")]
    if help_only(cmd) or (prog == "add-apt-repository" and {"-L", "--list"} & set(words)) or \
            (prog == "apt-key" and verbs[:1] and verbs[0] in _KEY_READS):
        out.read_only()
        return
    if prog == "rpmbuild":
        out.high(Code.SCRIPT_FILE, "rpmbuild runs the scripts of a spec file (as root under "
                 "sudo)", target=verbs[-1][:60] if verbs else prog)
        return
    trust(out, prog, verbs[0][:60] if verbs else prog, "changes which repositories or keys "
          "the package manager trusts; what they sign is installed as root")


_GPG_FILES = frozenset({"-o", "--output", "--keyring", "--primary-keyring"})


def gpg(cmd: SimpleCommand, out: Out) -> None:
    """gpg writing a keyring or output file where the package manager reads its trust
    (``--dearmor -o /usr/share/keyrings/x.gpg``, ``--keyring /etc/apt/trusted.gpg.d/…``):
    HIGH. Anything else stays as before: a program Anna does not model, MEDIUM."""
    args = cmd.args
    for index, word in enumerate(args):
        name, eq, attached = word.text.partition("=")
        if name not in _GPG_FILES or (not eq and index + 1 >= len(args)):
            continue
        places = [attached] if eq else [r.path for r in out.paths(args[index + 1])]
        for place in places:
            if paths.is_persistence(place) or paths.is_unknown_root(place):
                trust(out, "gpg", f"{name} {place[:60]}", "writes a keyring the package "
                      "manager trusts; what it signs is installed as root")
                return
    if not unknown_program_signals(cmd, out):  # as for any program Anna does not model
        out.medium(Code.UNKNOWN_PROGRAM, "gpg is not a program Anna knows; it may change "
                   "anything", target="gpg")


def hook_programs(command: str) -> list[str]:
    """Every absolute program or code path a package manager in ``command`` is told to run
    as root by its options (empty: none). The classifier bans the ones in places another
    user can write; the daemon checks the owners of the rest on the machine before the step
    runs (:func:`annad.execution.prestate_hooks.refuse_foreign_hooks`)."""
    found: list[str] = []
    for cmd in analyse(command).commands:
        rule = HOOK_RULES.get(cmd.program or "")
        if rule is None:
            continue
        out = Out(AssessContext())
        rule(cmd, out)
        found.extend(p for p in out.programs if p.startswith("/") and p not in found)
    return found


HOOK_RULES = {**dict.fromkeys(sorted(APT), apt), "dpkg": dpkg, "rpm": rpm,
              **dict.fromkeys(sorted(DNF), dnf), "zypper": zypper, "apk": apk}
"""Each manager's judge of its hook, configuration and trust options."""
