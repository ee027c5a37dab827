"""Secret files by what they hold: the files themselves, their backups and copies, the
credentials services keep, and Anna's own state.

A copy of ``/etc/shadow`` is as secret as the original, whatever its name: pacman leaves
``.pacsave``/``.pacnew``, dpkg ``.dpkg-old``, shadow-utils ``shadow-``, Debian's daily job
``/var/backups/shadow.bak``, editors ``~`` and ``.swp``, people ``.bak``/``.old``.
:func:`originals` undoes those names so :func:`anna_common.risk.paths.is_secret` judges the
file they copy; patterns name the system's own copies (``/etc/shadow.*``,
``/var/backups/*shadow*``) so the confined runs mask whatever of them exists.
"""

from __future__ import annotations

import re

_BY_NAME = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
    "/etc/ssl/private/*", "/etc/ssh/ssh_host_*_key", "/root/.ssh/*", "~/.ssh/id_*",
    "/home/*/.ssh/id_*", "~/.gnupg/*", "/home/*/.gnupg/*", "~/.aws/credentials",
    "~/.netrc", "~/.pgpass", "~/.password-store*", "~/.config/gh/hosts.yml",
    "~/.docker/config.json", "~/.kube/config", "~/.git-credentials",
    "/etc/NetworkManager/system-connections*",
    "/etc/wpa_supplicant/*.conf", "/var/lib/iwd/*", "*.key", "*.pem", "*.p12", "*.pfx", "*id_rsa",
    "*id_ed25519", "*id_ecdsa", "*id_dsa", "*.kdbx", "*/.env", ".env", "*/.ssh/id_*",
    "*/.aws", "*/.aws/*", "*/.azure", "*/.azure/*", "*/.config/gcloud*", "*/.oci", "*/.oci/*",
    "*.netrc", ".netrc", "*/.git-credentials", "*/.docker/config.json", "*/.kube/config",
    "*/.gnupg/private-keys*", "*_history", "*/.history", ".history", "*/.lesshst",
    "*/.local/share/fish/fish_history", "/var/log/btmp", "/etc/security/opasswd",
    "*credentials.db", "*access_tokens.db", "*accessTokens.json", "*msal_token_cache.json",
    # keytabs, keyrings, browser and mail password stores, service and VPN secrets, tokens
    "*.keytab", "*/.local/share/keyrings/*", "*/.mozilla/firefox/*/logins.json",
    "*/.mozilla/firefox/*/key4.db", "*/.thunderbird/*/logins.json", "*/.thunderbird/*/key4.db",
    "*/Login Data", "*/.pki/nssdb/*", "/var/lib/NetworkManager/secret_key",
    "/var/lib/systemd/credential.secret", "/var/lib/sss/db/*", "/etc/wireguard/*",
    "/etc/ppp/*-secrets", "/etc/ipsec.secrets", "/var/lib/samba/private/*",
    "*/.config/rclone/rclone.conf", "*/.s3cfg", "*/.npmrc", "*/.pypirc", "*/.cargo/credentials*",
    "*/.terraform.d/credentials*",
)

_PROTECTED = ("*/secrets/*", "secrets/*", "*id_rsa*", "*id_ed25519*", "*id_ecdsa*", "*.env",
              ".env", "*/.env.local", ".env.local", "*/.env.production", ".env.production")
"""Seed 004's protected paths (``.env``, ``*.pem``, ``*.key``, ``id_rsa*``, ``**/secrets/**``;
the first three are in the table above), with ``.env.local``/``.env.production`` beside
them (``.env.example`` is a template, not a secret)."""

_SERVICE_CREDENTIALS = (
    "/etc/mysql/debian.cnf", "/root/.my.cnf", "*/.my.cnf", "/etc/sssd/sssd.conf",
    "/etc/sssd/conf.d/*", "/etc/krb5.keytab", "/etc/postfix/sasl_passwd*",
    "/etc/ldap.secret", "/etc/pam_ldap.secret", "/etc/libnss-ldap.secret", "/etc/nslcd.conf",
    "/etc/samba/smbpasswd", "/etc/samba/*.tdb", "/etc/exim4/passwd.client", "*.htpasswd",
    "/etc/davfs2/secrets", "/etc/rsyncd.secrets", "*/.smbcredentials", "/etc/fetchmailrc",
    "*/.fetchmailrc", "/etc/credstore/*", "/etc/credstore.encrypted/*", "/run/credentials/*",
    "/etc/openvpn/*auth*", "/etc/openvpn/*.key", "/etc/openvpn/*pass*", "/etc/ppp/*secret*",
    "/etc/cifs-credentials*", "/etc/grafana/grafana.ini", "/etc/shadow.*", "/etc/gshadow.*",
    "/var/backups/*shadow*", "/var/lib/postgresql/.pgpass", "*/.pgpass", "/etc/pki/tls/private/*",
    "/etc/letsencrypt/archive/*", "/etc/letsencrypt/live/*/privkey*", "/etc/snmp/snmpd.conf",
)
"""Credentials services keep in their own files (database, directory, mail, VPN, TLS)."""

_ANNA_STATE = ("/var/lib/anna", "/var/lib/anna/*", "~/.local/state/anna", "~/.local/state/anna/*",
               "/home/*/.local/state/anna", "/home/*/.local/state/anna/*",
               "/root/.local/state/anna", "/root/.local/state/anna/*")
"""Anna's own journal, backups and per-user daemon state: what was backed up includes the
originals of files Anna changed, secrets among them."""

PROCESS_SECRETS = ("/proc/[0-9]*/environ", "/proc/[0-9]*/task/*/environ", "/proc/[0-9]*/mem",
                   "/proc/[0-9]*/task/*/mem", "/proc/kcore")
"""What another process holds: its environment (tokens, passwords handed to a service) and
its memory. Not in :data:`SECRET_PATTERNS`: those are files the confinement covers, and these
come and go with the processes (``/proc/self/environ``, the step's own, is no secret)."""

BACKUP_SUFFIXES = (
    "-", "~", ".bak", ".old", ".orig", ".save", ".sav", ".backup", ".copy", ".swp", ".swo",
    ".pacsave", ".pacnew", ".pacorig", ".dpkg-old", ".dpkg-new", ".dpkg-dist", ".dpkg-bak",
    ".dpkg-tmp", ".ucf-old", ".ucf-new", ".ucf-dist", ".rpmsave", ".rpmnew", ".rpmorig",
    ".gz", ".xz", ".bz2", ".zst",
)
"""Names tools and people give to a copy of a file."""

SECRET_PATTERNS: tuple[str, ...] = _BY_NAME + _PROTECTED + _SERVICE_CREDENTIALS + _ANNA_STATE
"""Patterns of secret files."""

_NUMBERED = re.compile(r"(?:\.[0-9]+|\.(?:bak|old|backup|save|orig|anna_backup)[._-]?[\w.:-]*)$")
_SWAP = re.compile(r"^(.*/)?\.([^/]+)\.sw[a-p]$")


def originals(path: str) -> list[str]:
    """The files ``path`` may be a copy of (empty when its name is not a copy's name):
    ``/etc/shadow.pacsave`` → ``/etc/shadow``; ``~/.ssh/.id_rsa.swp`` → ``~/.ssh/id_rsa``;
    ``/var/backups/shadow.bak`` → ``/etc/shadow``."""
    found: list[str] = []
    current = path
    for _ in range(4):  # ``shadow.bak.1.gz``: a few layers, never unbounded
        swap = _SWAP.match(current)
        stripped = (swap.group(1) or "") + swap.group(2) if swap else _strip_once(current)
        if stripped is None or stripped == current or stripped.endswith("/"):
            break
        found.append(stripped)
        current = stripped
    if path.startswith("/var/backups/"):
        found += ["/etc/" + name.rsplit("/", 1)[-1] for name in [path, *found]]
    return found


def _strip_once(path: str) -> str | None:
    if path.endswith(BACKUP_SUFFIXES):  # one test first: most names end in none of them
        for suffix in BACKUP_SUFFIXES:
            if path.endswith(suffix) and len(path) > len(suffix):
                return path[: -len(suffix)]
    match = _NUMBERED.search(path)
    return path[: match.start()] if match and match.start() > 0 else None
