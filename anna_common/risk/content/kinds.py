"""Which files govern access or run code, by kind: what the content rules read them as.

A path's kind names the grammar its content is read in (:mod:`anna_common.risk.content.meaning`):
a sudoers file grants, a tmpfiles.d line writes another file at every boot, a shell start-up
file runs its text, a unit runs its ``Exec*=`` lines, and so on. The same table serves the
command classifier (a path a command writes, ``~/`` for the caller's home) and the daemon's
judge of an observed change set (a real path the kernel resolved). The order matters: the
first pattern that matches wins (a system generator is a program, not a unit).
"""

from __future__ import annotations

import fnmatch
import re

from anna_common.risk.content.settings import kind_of_path as setting_kind

_TABLE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("anna", ("/etc/anna", "/etc/anna/*", "/etc/systemd/system/annad.*",
              "/etc/systemd/system/annad.service.d", "/etc/systemd/system/annad.service.d/*",
              "/run/systemd/system/annad.*", "/usr/lib/systemd/system/annad.*",
              "/etc/systemd/system.control/annad.*", "/run/systemd/system.control/annad.*",
              "/lib/systemd/system/annad.*", "/etc/systemd/system/anna-recipe@*",
              "/usr/lib/systemd/system/anna-recipe@*", "/usr/lib/tmpfiles.d/anna.conf",
              "/etc/tmpfiles.d/anna.conf", "/usr/lib/sysusers.d/anna.conf")),
    ("shell", ("/etc/systemd/system-generators/*", "/usr/lib/systemd/system-generators/*",
               "/lib/systemd/system-generators/*", "/usr/local/lib/systemd/system-generators/*",
               "/etc/systemd/user-generators/*", "/usr/lib/systemd/user-generators/*",
               "/etc/cron.hourly/*", "/etc/cron.daily/*", "/etc/cron.weekly/*",
               "/etc/cron.monthly/*", "/etc/profile", "/etc/profile.d/*", "/etc/bash.bashrc",
               "/etc/bashrc", "/etc/zsh/*", "/etc/zshrc", "/etc/zprofile", "/etc/rc.local",
               "/etc/init.d/*", "/etc/update-motd.d/*", "/etc/X11/Xsession.d/*",
               "/etc/NetworkManager/dispatcher.d/*", "*/.bashrc", "*/.bash_profile",
               "*/.bash_login", "*/.bash_logout", "*/.profile", "*/.bash_aliases",
               "*/.zshrc", "*/.zprofile", "*/.zshenv", "*/.zlogin", "*/.zlogout", "*/.kshrc",
               "*/.shrc", "*/.mkshrc", "*/.xinitrc", "*/.xprofile", "*/.xsession",
               "*/.xsessionrc", "*/.config/fish/*", "*/.ssh/rc", "/etc/ssh/sshrc")),
    ("environment", ("/etc/environment", "*/.pam_environment", "/etc/environment.d/*",
                     "/usr/lib/environment.d/*", "*/.config/environment.d/*")),
    ("tmpfiles", ("/etc/tmpfiles.d/*", "/usr/lib/tmpfiles.d/*", "/lib/tmpfiles.d/*",
                  "/run/tmpfiles.d/*", "/usr/local/lib/tmpfiles.d/*",
                  "*/.config/user-tmpfiles.d/*")),
    ("crontab", ("/etc/crontab", "/etc/cron.d/*", "/etc/anacrontab")),
    ("usercron", ("/var/spool/cron/*", "/var/spool/cron/crontabs/*")),
    ("unit", ("/etc/systemd/system/*", "/run/systemd/system/*", "/usr/lib/systemd/system/*",
              "/lib/systemd/system/*", "/usr/local/lib/systemd/system/*",
              "/etc/systemd/user/*", "/usr/lib/systemd/user/*", "*/.config/systemd/user/*",
              "*/.local/share/systemd/user/*", "/etc/systemd/system.control/*")),
    ("udev", ("/etc/udev/rules.d/*", "/usr/lib/udev/rules.d/*", "/lib/udev/rules.d/*",
              "/run/udev/rules.d/*")),
    ("polkit", ("/etc/polkit-1/rules.d/*", "/usr/share/polkit-1/rules.d/*")),
    ("pkla", ("/etc/polkit-1/localauthority/*", "/var/lib/polkit-1/localauthority/*",
              "/etc/polkit-1/localauthority.conf.d/*")),
    ("ldpreload", ("/etc/ld.so.preload",)),
    ("ldconf", ("/etc/ld.so.conf", "/etc/ld.so.conf.d/*")),
    ("autostart", ("*/.config/autostart/*", "/etc/xdg/autostart/*")),
    ("pth", ("*/site-packages/*.pth", "*/dist-packages/*.pth")),
    ("pycode", ("*/site-packages/sitecustomize.py", "*/dist-packages/sitecustomize.py",
                "*/site-packages/usercustomize.py", "*/dist-packages/usercustomize.py",
                "/etc/python3*/sitecustomize.py")),
    ("logrotate", ("/etc/logrotate.conf", "/etc/logrotate.d/*")),
    ("gitconfig", ("/etc/gitconfig", "*/.gitconfig", "*/.config/git/config", "*/.git/config")),
    ("sudoconf", ("/etc/sudo.conf",)),
    ("alternative", ("/etc/alternatives/*",)),
    ("aptsources", ("/etc/apt/sources.list", "/etc/apt/sources.list.d/*")),
    ("aptconf", ("/etc/apt/apt.conf", "/etc/apt/apt.conf.d/*")),
    ("rpmrepo", ("/etc/yum.repos.d/*", "/etc/dnf/dnf.conf", "/etc/yum.conf",
                 "/etc/zypp/repos.d/*", "/etc/zypp/zypp.conf")),
    ("trust", ("/etc/apt/trusted.gpg", "/etc/apt/trusted.gpg.d/*", "/etc/apt/keyrings/*",
               "/usr/share/keyrings/*", "/etc/pacman.d/gnupg/*", "/etc/ssl/certs/*",
               "/etc/ssl/certs", "/usr/local/share/ca-certificates/*",
               "/usr/share/ca-certificates/*", "/etc/ca-certificates.conf",
               "/etc/ca-certificates/*", "/etc/pki/ca-trust/*", "/etc/pki/rpm-gpg/*",
               "/etc/pki/tls/certs/*", "/etc/ssl/cert.pem")),
)
"""Kind → the paths that hold it (shell patterns; ``*`` crosses ``/``)."""

_ROOTS = ("/etc/", "/usr/", "/lib/", "/run/", "/var/spool/cron", "/etc")
_ANYWHERE = ("shell", "environment", "unit", "autostart", "pth", "pycode", "gitconfig",
             "tmpfiles")
"""Kinds with patterns that can match outside the system trees (a home, a venv)."""


def _one(kinds: tuple[tuple[str, tuple[str, ...]], ...]) -> re.Pattern[str]:
    """The kinds' patterns as one regex, in table order: the group of the first alternative
    that matches (named for its kind) is the first kind whose patterns match."""
    return re.compile("|".join(f"(?P<{kind}>{'|'.join(fnmatch.translate(p) for p in ps)})"
                               for kind, ps in kinds))


_SYSTEM = _one(_TABLE)
_OUTSIDE = _one(tuple((kind, ps) for kind, ps in _TABLE if kind in _ANYWHERE))

PATH_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
             "/snap/bin")
"""The directories of root's PATH (systemd's and sudo's ``secure_path``): a program there
runs whenever root types its name."""

RUNS_OR_GRANTS = frozenset(k for k, _ in _TABLE) | {
    "selinux", "pacman", "sudoers", "cmdline", "sysctl", "procsys", "shadow", "sshd", "pam",
    "lsm"}
"""Every kind the content rules read."""


def kind_of(path: str) -> str | None:
    """The kind of file ``path`` is (None: its content governs nothing Anna reads)."""
    kind = setting_kind(path)
    if kind is not None:
        return kind
    match = (_SYSTEM if path.startswith(_ROOTS) else _OUTSIDE).match(path)
    return match.lastgroup if match else None


def is_anna_config(path: str) -> bool:
    """Anna's own configuration: ``/etc/anna/**`` and annad's unit and drop-ins."""
    return kind_of(path) == "anna"


__all__ = ["PATH_DIRS", "RUNS_OR_GRANTS", "is_anna_config", "kind_of"]
