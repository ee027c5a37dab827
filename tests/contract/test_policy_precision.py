"""Issue 34 item 7: policy paths with the precision Anna has.

Found on main at 8a1b4b5: an administrator's ``deny path="/**/id_rsa"`` (never touch a
private key anywhere) denied every write of every plan — ``echo hi > /tmp/x``, ``sed -i`` on
/etc/hosts, ``cp a b`` — because each written path was matched as a directory whose contents
the command might reach, even when the command cannot recurse. Now a path the command can
only act on as that file (a redirection, ``tee``, ``sed -i``, ``cp`` without ``-r``,
``chmod`` without ``-R``, ``rm`` without ``-r``, what the observed change set shows as a file)
is matched as the file; a recursive or unknown reach (``rm -r``, ``mv``, ``tar -x``, ``find
-delete``, code Anna cannot see) is still matched as the tree below it.
"""

from __future__ import annotations

import pytest

from anna_common.policy.decide import Policy, decide_command, parse
from anna_common.risk.assess import assess
from anna_common.risk.rules.base import AssessContext

CTX = AssessContext(distro="arch", home="/home/alice")
KEYS = parse('[[rule]]\nid = "no-keys"\naction = "deny"\npath = "/**/id_rsa"\n',
             source="/etc/anna/policy.toml")
READS = parse('[[rule]]\nid = "no-key-reads"\naction = "ask"\npath = "/**/id_rsa"\n'
              'access = "any"\n', source="/etc/anna/policy.toml")
SSH = parse('[[rule]]\nid = "ssh"\naction = "deny"\npath = "/etc/ssh/**"\n',
            source="/etc/anna/policy.toml")


def action(pol: Policy, command: str) -> str:
    verdict = assess(command, CTX)
    return decide_command(pol, command, verdict.risk, verdict.scope, CTX).action


@pytest.mark.parametrize("command", [
    "echo hi > /tmp/x",
    "echo hi >> ~/notes.txt",
    "sudo sed -i 's/old/new/' /etc/hosts",
    "cp a b",
    "cp /etc/hosts /tmp/hosts.bak",
    "install -m 644 x.conf /etc/x.conf",
    "tee /tmp/out < /tmp/in",
    "printf 'a\\n' | sudo tee -a /etc/motd",
    "chmod 600 ~/.ssh/config",
    "rm /tmp/old.log",
    "touch ~/a ~/b",
    "mkdir -p ~/projects/new",
    "ln -s /usr/bin/vim ~/bin/vi",
    "dd if=/dev/zero of=/tmp/blob bs=1M count=1",
    "curl -o /tmp/page.html https://example.org",
    "sort -o /tmp/sorted /tmp/list",
    "patch /etc/hosts /tmp/hosts.diff",
    "cd /tmp && echo hi > x",
    "sudo tee -- /etc/hostname",
    "sudo mkdir -p -- /var/lib/app",
])
def test_a_key_rule_lets_file_writes_that_cannot_reach_a_key_through(command: str) -> None:
    assert action(KEYS, command) != "deny", command


@pytest.mark.parametrize("command", [
    "echo x > ~/.ssh/id_rsa",
    "cp key ~/.ssh/id_rsa",
    "cp id_rsa /tmp/",
    "cp ~/.ssh/id_rsa backup/",
    "ln -s /tmp/k ~/.ssh/id_rsa",
    "chmod 644 ~/.ssh/id_rsa",
    "rm ~/.ssh/id_rsa",
    "sudo sed -i d /root/.ssh/id_rsa",
    "rm -r ~/.ssh",
    "rm -rf /tmp/x",
    "chmod -R 755 ~/stuff",
    "mv a b",
    "tar -xf keys.tar -C ~/restore",
    "find /srv -delete",
    "rsync -a x/ /srv/y/",
    "cp -r ~/.ssh /tmp/ssh-copy",
    "echo x > \"$F\"",
    "python3 -c 'open(\"/tmp/\" + n, \"w\").write(\"x\")'",
    "git checkout main",
    "sudo rm -rf -- /home/alice/old",
])
def test_a_key_rule_still_holds_where_the_reach_is_a_tree_or_unknown(command: str) -> None:
    assert action(KEYS, command) == "deny", command


def test_the_same_for_a_tree_rule_on_a_directory() -> None:
    for command in ("echo x > /etc/ssh/sshd_config", "cp x /etc/ssh/", "rm -rf /etc",
                    "sed -i s/a/b/ /etc/ssh/sshd_config", "chmod 600 /etc/ssh/x"):
        assert action(SSH, command) == "deny", command
    for command in ("echo x > /etc/hosts", "rm /etc/sshx", "cp x /etc/", "touch /etc/sshd"):
        assert action(SSH, command) != "deny", command


@pytest.mark.parametrize(("command", "asked"), [
    ("cat /etc/hosts", False),
    ("grep root /etc/passwd", False),
    ("wc -l /tmp/x", False),
    ("cat ~/.ssh/id_rsa", True),
    ("grep -r key /etc", True),
    ("ls ~/.ssh", True),
    ("tar -cf /tmp/home.tar ~", True),
])
def test_an_any_access_rule_reads_single_files_as_files(command: str, asked: bool) -> None:
    assert (action(READS, command) == "ask") is asked, command


@pytest.mark.parametrize("change", [
    "tee -- /tmp/x", "sudo tee -- /etc/hosts", "sudo mkdir -p -- /var/lib/x",
    "sudo rm -f -- /etc/old.conf",
])
def test_an_observed_file_change_is_matched_as_that_file(change: str) -> None:
    """The capture spells each observed change as the command that makes it
    (``annad.capture.judge``): a file written, a directory made, a file removed."""
    assert action(KEYS, change) != "deny", change


def test_an_observed_tree_removal_is_still_matched_as_the_tree() -> None:
    assert action(KEYS, "sudo rm -rf -- /srv/old") == "deny"
