"""rpm, dnf/yum and zypper: their hook, configuration and trust options (issue 34).

The rules are :mod:`anna_common.risk.rules.pmhooks`' (which dispatches here): a macro that
runs code (``rpm --eval '%(…)'``, ``--define``), another configuration, root or database
(``--macros``, ``--dbpath``, ``dnf -c``, ``--installroot``, ``zypper --root``), another
repository (``--repofrompath``, ``--plus-repo``, ``zypper addrepo``), plugins from another
place (``--setopt=pluginpath=``) or weaker trust (``--nosignature``, ``--nogpgcheck``,
``gpgcheck=0``, ``--no-gpg-checks``) is HIGH; a program or plugin path another user can
write is banned. dnf (argparse) and zypper (getopt) take unique prefixes of long options.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out
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

if TYPE_CHECKING:
    from anna_common.shell.grammar import SimpleCommand

DNF = frozenset({"dnf", "dnf5", "dnf-3", "yum", "microdnf", "tdnf"})
"""The dnf family (yum is dnf on current Fedora and RHEL)."""

# ------------------------------------------------------------------------------------ rpm

_RPM_GRAMMAR = Grammar(short={"E": "--eval", "D": "--define", "r": "--root"},
                       valued=frozenset({"--eval", "--define", "--root", "--dbpath",
                                         "--macros", "--load", "--rcfile", "--pipe",
                                         "--queryformat", "--qf", "--undefine"}))
_MACRO_CODE = re.compile(r"%\(|%\{\s*lua\s*:|%\{\s*expand\s*:|%\{\s*(?:define|global)\b")
_SHELL_MACRO = re.compile(r"%\(([^()]*(?:\([^()]*\)[^()]*)*)\)")


def rpm(cmd: SimpleCommand, out: Out) -> None:
    """rpm: macros that run code, another configuration, root or database, no signatures."""
    given, unknown = scan(cmd.args, _RPM_GRAMMAR)
    if unknown:
        unknown_option(out, "rpm")
    for opt in given:
        value = opt.value.text if opt.value is not None and opt.value.literal else None
        if opt.name == "--pipe":
            hook(out, "rpm", opt.name, value)
        elif opt.name in ("--eval", "--define"):
            _macro(out, opt.name, value)
        elif opt.name in ("--queryformat", "--qf") and (value is None or "%(" in value):
            _macro(out, opt.name, value)  # tags, not macros; a shell macro is not read as data
        elif opt.name in ("--macros", "--load", "--rcfile"):
            config(out, "rpm", opt, "reads macros from another file (a macro can run a shell)")
        elif opt.name in ("--root", "--dbpath"):
            root_option(out, "rpm", opt, ("/",) if opt.name == "--root" else
                         ("/var/lib/rpm", "/usr/lib/sysimage/rpm"))
        elif opt.name in ("--nosignature", "--nodigest", "--nofiledigest", "--noverify",
                          "--import"):
            trust(out, "rpm", opt.name, "changes which packages are trusted")


def _macro(out: Out, option: str, value: str | None) -> None:
    if value is None:
        out.high(Code.EMBEDDED_SHELL, f"rpm {option} expands a macro only known at run time "
                 "(a macro can run a shell)", system=True, target=option)
        return
    if _MACRO_CODE.search(value):
        for inner in _SHELL_MACRO.findall(value):
            hook(out, "rpm", f"{option} %(…)", inner)
        out.high(Code.EMBEDDED_SHELL, f"rpm {option} {value[:60]}: the macro runs code",
                 system=True, target=option)
    elif option == "--define":
        out.high(Code.UNTRUSTED_BUILD, f"rpm --define {value[:60]}: changes a macro rpm "
                 "expands while it installs (paths, scriptlets)", system=True, target=option)


# -------------------------------------------------------------------------------- dnf/yum

_DNF_KNOWN = frozenset({
    "--config", "--setopt", "--nogpgcheck", "--repofrompath", "--installroot", "--forcearch",
    "--enableplugin", "--disableplugin", "--noplugins", "--enablerepo", "--disablerepo",
    "--repo", "--repoid", "--releasever", "--exclude", "--excludepkgs", "--assumeyes",
    "--assumeno", "--allowerasing", "--skip-broken", "--best", "--nobest", "--noautoremove",
    "--refresh", "--cacheonly", "--downloadonly", "--downloaddir", "--destdir", "--quiet",
    "--verbose", "--debuglevel", "--errorlevel", "--color", "--nodocs", "--comment",
    "--advisory", "--security", "--bugfix", "--enhancement", "--newpackage", "--sec-severity",
    "--bz", "--cve", "--help", "--version", "--showduplicates", "--obsoletes", "--randomwait",
    "--rpmverbosity", "--disableexcludes", "--skip-unavailable", "--use-host-config",
    "--no-gpgchecks"})
"""dnf's long options (argparse takes any unique prefix: ``--nogpg`` is ``--nogpgcheck``)."""
_DNF_GRAMMAR = Grammar(short={"c": "--config", "x": "--exclude", "d": "--debuglevel",
                              "e": "--errorlevel", "R": "--randomwait"},
                       valued=frozenset({"--config", "--setopt", "--repofrompath",
                                         "--installroot", "--forcearch", "--enableplugin",
                                         "--disableplugin", "--enablerepo", "--disablerepo",
                                         "--repo", "--repoid", "--releasever", "--exclude",
                                         "--excludepkgs", "--debuglevel", "--errorlevel",
                                         "--color", "--downloaddir", "--destdir",
                                         "--comment", "--advisory", "--sec-severity",
                                         "--bz", "--cve", "--randomwait", "--rpmverbosity",
                                         "--disableexcludes"}),
                       known=_DNF_KNOWN)
_DNF_CODE_KEYS = frozenset({"pluginpath", "pluginconfpath"})
_DNF_HARMLESS = frozenset({
    "install_weak_deps", "keepcache", "max_parallel_downloads", "fastestmirror",
    "skip_if_unavailable", "timeout", "retries", "minrate", "deltarpm", "best",
    "clean_requirements_on_remove", "exclude", "excludepkgs", "includepkgs", "tsflags",
    "multilib_policy", "zchunk", "metadata_expire", "countme", "ip_resolve", "throttle",
    "bandwidth", "color", "debuglevel", "errorlevel", "assumeyes", "assumeno", "defaultyes",
    "diskspacecheck", "enabled", "priority", "cost", "installonly_limit", "proxy",
    "obsoletes", "strict", "skip_broken", "allow_vendor_change"})
"""``--setopt`` keys that change how dnf resolves or downloads, not what it runs or trusts."""


def dnf(cmd: SimpleCommand, out: Out) -> None:
    """dnf, yum, microdnf, tdnf: ``--setopt`` keys, configuration, roots and trust flags."""
    prog = cmd.program or "dnf"
    given, unknown = scan(cmd.args, _DNF_GRAMMAR)
    if unknown:
        unknown_option(out, prog)
    for opt in given:
        if opt.name == "--setopt":
            _dnf_setting(out, prog, opt)
        elif opt.name == "--config":
            config(out, prog, opt, "reads another configuration (plugins, repositories, "
                    "gpgcheck)")
        elif opt.name == "--installroot":
            root_option(out, prog, opt, ("/",))
        elif opt.name in ("--repofrompath", "--forcearch"):
            out.high(Code.UNTRUSTED_BUILD, f"{prog} {opt.name}: installs from a repository "
                     "or for an architecture the system is not set up with", system=True,
                     target=opt.name)
        elif opt.name in ("--nogpgcheck", "--no-gpgchecks"):
            trust(out, prog, opt.name, "installs without checking signatures")
    words = [w for w in cmd.args if not w.text.startswith("-")]
    if [w.text for w in words[:2]] == ["config-manager", "setopt"]:
        for word in words[2:]:  # dnf5: config-manager setopt KEY=VALUE…, kept in the config
            _dnf_setting(out, prog, Given("--setopt", word))


def _dnf_setting(out: Out, prog: str, opt: Given) -> None:
    if opt.value is None or not opt.value.literal:
        unknown_option(out, prog)
        return
    key, _, value = opt.value.text.partition("=")
    name = key.strip().lower().rsplit(".", 1)[-1]
    shown = f"--setopt={opt.value.text[:80]}"
    if name in _DNF_CODE_KEYS:
        program(out, prog, shown, re.split(r"[,\s]+", value))
    elif name not in _DNF_HARMLESS:
        out.high(Code.UNTRUSTED_BUILD, f"{prog} {shown}: a setting that changes what {prog} "
                 "runs or trusts (repositories, signatures, plugins, paths)", system=True,
                 target=key)


# --------------------------------------------------------------------------------- zypper

_ZYPPER_KNOWN = frozenset({
    "--config", "--no-gpg-checks", "--gpg-auto-import-keys", "--plus-repo", "--plus-content",
    "--root", "--reposd-dir", "--cache-dir", "--raw-cache-dir", "--solv-cache-dir",
    "--pkg-cache-dir", "--installroot", "--allow-unsigned-rpm", "--no-gpgcheck",
    "--gpgcheck-allow-unsigned", "--gpgcheck-allow-unsigned-repo",
    "--gpgcheck-allow-unsigned-package", "--non-interactive", "--no-refresh", "--quiet",
    "--verbose", "--userdata", "--disable-repositories", "--no-cd", "--xmlout", "--help",
    "--version", "--non-interactive-include-reboot-patches", "--no-color", "--terse",
    "--table-style", "--ignore-unknown", "--no-recommends", "--force", "--from", "--repo",
    "--auto-agree-with-licenses", "--auto-agree-with-product-licenses", "--dry-run",
    "--download-only", "--oldpackage", "--details", "--clean-deps", "--gpgcheck"})
_ZYPPER_GRAMMAR = Grammar(short={"c": "--config", "p": "--plus-repo", "R": "--root",
                                 "D": "--reposd-dir", "C": "--cache-dir", "r": "--repo",
                                 "G": "--no-gpgcheck"},
                          valued=frozenset({"--config", "--plus-repo", "--plus-content",
                                            "--root", "--reposd-dir", "--cache-dir",
                                            "--raw-cache-dir", "--solv-cache-dir",
                                            "--pkg-cache-dir", "--installroot", "--from",
                                            "--repo", "--userdata", "--table-style"}),
                          known=_ZYPPER_KNOWN)
_ZYPPER_STATE = frozenset({"--root", "--reposd-dir", "--cache-dir", "--raw-cache-dir",
                           "--solv-cache-dir", "--pkg-cache-dir", "--installroot"})
_ZYPPER_TRUST = frozenset({"--no-gpg-checks", "--gpg-auto-import-keys", "--allow-unsigned-rpm",
                           "--no-gpgcheck", "--gpgcheck-allow-unsigned",
                           "--gpgcheck-allow-unsigned-repo", "--gpgcheck-allow-unsigned-package"})
_ZYPPER_REPOS = frozenset({"ar", "addrepo", "as", "addservice", "mr", "modifyrepo"})


def zypper(cmd: SimpleCommand, out: Out) -> None:
    """zypper: another configuration or root, extra repositories, weaker signature checks."""
    given, unknown = scan(cmd.args, _ZYPPER_GRAMMAR)
    if unknown:
        unknown_option(out, "zypper")
    for opt in given:
        if opt.name == "--config":
            config(out, "zypper", opt, "reads another configuration")
        elif opt.name in _ZYPPER_STATE:
            root_option(out, "zypper", opt, ("/",) if opt.name in ("--root", "--installroot")
                         else ())
        elif opt.name == "--plus-repo":
            out.high(Code.UNTRUSTED_BUILD, "zypper --plus-repo: installs from a repository "
                     "the system is not set up with", system=True, target=opt.name)
        elif opt.name in _ZYPPER_TRUST:
            trust(out, "zypper", opt.name, "installs what the signature checks would refuse")
    verb = next((w.text for w in cmd.args if not w.text.startswith("-")), "")
    if verb in _ZYPPER_REPOS and verb not in ("mr", "modifyrepo"):
        out.high(Code.UNTRUSTED_BUILD, f"zypper {verb}: trusts a new repository or service",
                 system=True, target=verb)
