"""Secret reads and writes reached sideways: a bare redirection, the kernel's links to a
process's root, whole-tree readers, ``find -exec``/``xargs`` fed by ``find`` or ``ls``, and
files only known at run time.

Each class was probed with variants (quoting, sudo, globs, loops, substitutions) before the
fix; every command here was INFO or LOW then.
"""

from __future__ import annotations

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess

CTX = AssessContext(distro="arch", home="/home/alice", bootloader="grub")


def _tier(command: str) -> tuple[RiskLevel, bool]:
    verdict = assess(command, CTX)
    return verdict.risk, verdict.banned


# ---------------------------------------------------------------- redirections with no command

@pytest.mark.parametrize("command", [
    "> /etc/passwd", ">/etc/passwd", "2> /etc/passwd", "&> /etc/passwd", ">| /etc/passwd",
    "{ > /etc/passwd; }", "( > /etc/passwd )", "if true; then > /etc/passwd; fi",
    "x=$(id) > /etc/passwd", "> /dev/sda", "true && > /etc/shadow",
])
def test_a_bare_redirection_truncates_as_the_null_command_does(command: str) -> None:
    assert _tier(command) == (RiskLevel.HIGH, True)
    assert _tier(command.replace(">", ": >", 1) if command.startswith(">") else command)[1]


@pytest.mark.parametrize(("command", "tier"), [
    (">> /etc/passwd", RiskLevel.HIGH), ("> ~/.bashrc", RiskLevel.HIGH),
    ("> /etc/hosts", RiskLevel.HIGH), ("< /etc/shadow", RiskLevel.HIGH),
    ("> ~/notes.txt", RiskLevel.LOW), ("> /tmp/x", RiskLevel.LOW),
    ("> /dev/null", RiskLevel.INFO),
])
def test_a_bare_redirection_gets_its_targets_tier(command: str, tier: RiskLevel) -> None:
    assert _tier(command) == (tier, False)


# ---------------------------------------------------------------- /proc/PID/root and cwd

@pytest.mark.parametrize("command", [
    "cat /proc/self/root/etc/shadow", "cat /proc/1/root/etc/shadow",
    "cat /proc/thread-self/root/etc/shadow", "cat /proc/self/task/1/root/etc/shadow",
    "cat /proc/*/root/etc/shadow", "cat /proc/self/r??t/etc/shadow",
    "cat /pro?/self/root/etc/shadow", "cat /proc/self/root/../etc/shadow",
    "cat /proc/self/root/proc/self/root/etc/shadow", "cat /tmp/../proc/self/root/etc/shadow",
    "sudo cat /proc/self/root/etc/shadow", "cd /proc/self/root/etc && cat shadow",
    "cat ~/../../proc/self/root/etc/shadow", "cat /p*/s*/r*/etc/shadow",
    "R=/proc/self/root; cat $R/etc/shadow", 'cat "/proc/self/root/etc/shadow"',
    "find /proc/self/root/etc -exec cat {} +", "ln -s /proc/self/root/etc /tmp/e",
])
def test_the_process_root_link_is_the_root(command: str) -> None:
    assert _tier(command)[0] == RiskLevel.HIGH


@pytest.mark.parametrize("command", [
    "rm -rf /proc/self/root/", "rm -rf /proc/self/root", "rm -rf /proc/1/root/etc",
    "rm -rf /proc/self/root/home/alice",
])
def test_deleting_through_the_process_root_link_is_banned(command: str) -> None:
    assert _tier(command)[1]


def test_the_working_directory_link_is_an_unknown_place() -> None:
    assert _tier("cat /proc/self/cwd/shadow")[0] == RiskLevel.MEDIUM
    assert _tier("cat /proc/self/cwd/notes.txt")[0] == RiskLevel.INFO
    assert _tier("rm -rf /proc/self/cwd/x")[1]


@pytest.mark.parametrize("command", ["cat /proc/cpuinfo", "cat /proc/self/status",
                                     "ls /proc/self/root", "cat /proc/self/root/etc/hostname"])
def test_ordinary_proc_reads_stay_info(command: str) -> None:
    assert _tier(command) == (RiskLevel.INFO, False)


# ---------------------------------------------------------------- whole trees

@pytest.mark.parametrize("command", [
    "grep -r x /etc", "grep -rn x /etc/", "grep -R root /", "grep -ri x ~", "rg token ~/.config",
    "grep -r x .", "grep -r x ..", "sudo grep -r x .", "tar c /etc", "tar czf /tmp/e.tgz /etc",
    "tar --create -f /tmp/e.tar /root", "cp -r /etc /tmp/x", "cp -a ~/.ssh /tmp/x",
    "rsync -a /etc /tmp/x", "zip -r /tmp/x /etc", "diff -r /etc /tmp/etc",
    "cd / && grep -r x etc", "cd /etc && grep -r x .", "grep -r x /e?c",
    "ln -s /etc /tmp/e; cat /tmp/e/shadow", "ln -s ~/.ssh /tmp/k", "cd /tmp && ln -s /etc e",
    "bash -c 'grep -r x /etc'", "env grep -r x /etc", "sh -c 'cat \"$(</etc/shadow)\"'",
])
def test_reading_a_tree_that_holds_secrets_is_high(command: str) -> None:
    assert _tier(command)[0] == RiskLevel.HIGH


@pytest.mark.parametrize("command", [
    "find /etc -name shadow -exec cat {} +", "find /etc -name shadow -exec cat {} \\;",
    "find / -name shadow -exec head {} \\;", "find . -type f -exec cat {} +",
    "find /etc -type f | xargs cat", "find . | xargs cat", "ls /etc/shadow | xargs cat",
    "ls ~/.ssh | xargs cat", "find /etc -type f | grep shadow | xargs cat",
    "cat $(find /etc -type f)", "cat $(ls /etc/shadow)", "cat `find /etc -type f`",
    "find /etc -type f -print0 | sudo xargs -0 cat",
])
def test_files_found_below_a_secret_holding_tree_are_secret_reads(command: str) -> None:
    assert _tier(command)[0] == RiskLevel.HIGH


@pytest.mark.parametrize("command", [
    "grep -r listen /etc/nginx", "grep -r error /var/log", "rg todo ~/project",
    "grep -r x src", "find /etc/nginx -name '*.conf' -exec cat {} +",
    "find ~/project -name '*.py' -exec wc -l {} +", "cat $(find /etc/nginx -name '*.conf')",
    "find /etc/nginx -type f | grep conf | xargs cat", "grep pattern /etc/hosts",
])
def test_trees_without_secrets_stay_info(command: str) -> None:
    assert _tier(command) == (RiskLevel.INFO, False)


@pytest.mark.parametrize("command", ["ln -s /etc/nginx ~/nginx",
                                     "ln -s /usr/share/backgrounds/x.png ~/wall.png"])
def test_links_to_places_without_secrets_stay_low(command: str) -> None:
    assert _tier(command) == (RiskLevel.LOW, False)


# ---------------------------------------------------------------- files known only at run time

@pytest.mark.parametrize("command", [
    'cat "$f"', "cat $UNKNOWN", "cat ${x:-/etc/shadow}", "cat ${HOME%/*}/../etc/shadow",
    "for f in /etc/shadow; do cat $f; done", 'for f in /etc/*; do cat "$f"; done',
    'while read f; do cat "$f"; done <<< /etc/shadow', 'a=(/etc/shadow); cat "${a[0]}"',
    "xargs cat <<< /etc/shadow", "cat $(cat /tmp/list)", "cat $D/shadow", "cat $D/*",
    'cat < "$f"', "dd if=$f of=/tmp/x", 'grep -e "$p" "$f"',
    "find /etc -type f | grep -o shadow | xargs cat",
])
def test_a_reader_of_a_file_known_only_at_run_time_asks(command: str) -> None:
    assert _tier(command)[0] >= RiskLevel.MEDIUM


@pytest.mark.parametrize("command", [
    'cat "$XDG_CONFIG_HOME/hypr/hyprland.conf"', "cat $D/notes.txt", 'echo "$f"',
    'grep "$pattern" /etc/hosts', 'sed -n "$n"p /etc/hosts', "paste <(cal 2 2009) <(cal 3 2009)",
    'systemctl status "$unit"',
])
def test_run_time_words_that_cannot_name_a_secret_stay_info(command: str) -> None:
    assert _tier(command) == (RiskLevel.INFO, False)


def test_dd_reading_a_secret_is_a_secret_read() -> None:
    assert _tier("dd if=/etc/shadow")[0] == RiskLevel.HIGH
    assert _tier("dd if=/etc/shadow of=/tmp/x")[0] == RiskLevel.HIGH


# ---------------------------------------------------------------- files read through options

@pytest.mark.parametrize("command", [
    "xargs -a /etc/shadow echo", "xargs --arg-file=/etc/shadow echo", "xargs -a/etc/shadow echo",
    "sudo xargs -0 -a /etc/shadow echo", "file -f /etc/shadow", "tar -T /etc/shadow -cf /tmp/x",
    "tar --files-from=/etc/shadow -cf /tmp/x", "rsync --files-from=/etc/shadow / /tmp/x",
    "wc --files0-from=/etc/shadow", "du --files0-from=/etc/shadow", "curl file:///etc/shadow",
    "wget -O- file:///etc/shadow", "curl FILE:///etc/shadow", 'echo "$(</etc/shadow)"',
    "echo $(< /etc/shadow)", "x=$(</etc/shadow); echo $x",
])
def test_a_secret_read_through_an_option_or_a_substitution_is_high(command: str) -> None:
    assert _tier(command)[0] == RiskLevel.HIGH


@pytest.mark.parametrize("command", ["xargs -a /tmp/list echo", "file -f /tmp/list",
                                     'echo "$(</etc/hostname)"', "file /etc/shadow"])
def test_the_same_options_on_ordinary_files_stay_info(command: str) -> None:
    assert _tier(command) == (RiskLevel.INFO, False)


@pytest.mark.parametrize("path", [
    "/etc/krb5.keytab", "~/.local/share/keyrings/login.keyring",
    "~/.mozilla/firefox/x.default/logins.json", "~/.config/chromium/Default/Login\\ Data",
    "/var/lib/NetworkManager/secret_key", "/var/lib/systemd/credential.secret",
    "/etc/wireguard/wg0.conf", "/etc/ppp/chap-secrets", "~/.npmrc", "~/.pypirc",
    "~/.config/rclone/rclone.conf", "~/.cargo/credentials.toml",
])
def test_more_secret_stores_are_secret(path: str) -> None:
    assert _tier(f"cat {path}")[0] == RiskLevel.HIGH


@pytest.mark.parametrize("command", ["rm -rf /\x00", "echo hi\x1b[31m", "ls\r", "ls\x7f",
                                     "cat /etc/hostname\x08\x08"])
def test_a_control_character_in_any_command_is_refused(command: str) -> None:
    from anna_common.findings import FindingCode
    from anna_common.validate import validate
    from tests.daemonfix import make_plan

    for plan in (make_plan([("s1", command, "LOW")]),
                 make_plan([("s1", "true", "LOW")], rollback={"s1": command}),
                 make_plan([("s1", "true", "LOW")], checks=[("c1", command)])):
        result = validate(plan)
        assert not result.ok
        assert [f.code for f in result.errors] == [FindingCode.CONTROL_CHARACTER]


def test_tab_and_newline_are_allowed() -> None:
    from anna_common.validate import validate
    from tests.daemonfix import make_plan

    assert validate(make_plan([("s1", "printf 'a\\tb'\tx; echo a\necho b", "LOW")])).ok


@pytest.mark.parametrize(("command", "tier"), [
    ("grep -r x ~/*", RiskLevel.INFO), ("grep -r x ~/.*", RiskLevel.HIGH),
    ("tar czf /tmp/t.tgz -C /tmp/work .", RiskLevel.LOW),
    ("tar czf /tmp/t.tgz -C /etc .", RiskLevel.HIGH),
    ("tar czf /tmp/t.tgz --directory=/etc nginx", RiskLevel.LOW),
    ("tar czf /tmp/t.tgz --directory=/etc ssh", RiskLevel.HIGH),
])
def test_tree_reads_see_what_bash_and_tar_see(command: str, tier: RiskLevel) -> None:
    # a glob's leading * skips dot files (~/.ssh); tar -C DIR reads its operands below DIR
    assert _tier(command)[0] == tier
