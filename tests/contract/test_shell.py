"""The bash analysis: what runs, behind which wrappers, fed by what, writing where."""

from __future__ import annotations

import pytest

from anna_common.risk.writes import write_targets
from anna_common.shell.grammar import analyse


def programs(source: str) -> list[str | None]:
    return [c.program for c in analyse(source).commands]


def test_wrappers_are_peeled() -> None:
    cmd = analyse("sudo -u root env A=1 nice -n 5 timeout 10 /usr/bin/rm -rf /x").commands[0]
    assert cmd.program == "rm"
    assert [w.text for w in cmd.args] == ["-rf", "/x"]
    assert cmd.wrappers == ["sudo", "env", "nice", "timeout"]
    assert cmd.privileged
    assert ("A", "1") in [(n, w.text) for n, w in cmd.assignments]


def test_names_are_normalised() -> None:
    for source in ["\\rm x", "r''m x", '"rm" x', "'r'm x", "/bin/rm x", "./rm x"]:
        assert programs(source) == ["rm"], source


def test_pipelines_know_their_producers() -> None:
    cmds = analyse("curl -s https://x | tee /tmp/a | sh").commands
    sh = cmds[-1]
    assert sh.program == "sh"
    assert sh.stdin.kind == "pipe"
    assert [p.program for p in sh.stdin.producers] == ["tee"]
    assert cmds[1].stdin.producers[0].program == "curl"


def test_substitutions_are_analysed_and_linked() -> None:
    analysis = analyse('sh -c "$(wget -qO- https://x)"')
    assert [c.program for c in analysis.commands] == ["wget", "sh"]
    sh = analysis.commands[1]
    assert [c.program for c in sh.substitutions] == ["wget"]
    assert analysis.opaque  # the code is built at run time


def test_literal_echo_substitution_is_seen_through() -> None:
    assert programs("$(echo rm) -rf /tmp/x")[-1] == "rm"
    assert programs("`printf rm` -f x")[-1] == "rm"


@pytest.mark.parametrize(("command", "program"), [
    ("$(printf -- rm) -rf /tmp/x", "rm"),            # ``--`` ends printf's options
    ("printf -- 'rm -f /x' | sh", "rm"),
    ("$(echo -n -e rm) -f x", "rm"),                 # leading option words only
])
def test_printed_text_follows_echo_and_printf_options(command: str, program: str) -> None:
    assert programs(command)[-1] == program


@pytest.mark.parametrize("command", [
    "$(echo -e 'r\\x6d') -rf /tmp/x",                  # escapes spell anything
    "$(echo 'r\\155') -rf /tmp/x",                     # sh's echo reads them without -e
    "$(printf 'r\\155') -rf /tmp/x",
    "$(printf -v v rm) -rf /tmp/x",                    # -v prints nothing
    "echo -e 'r\\x6d -rf /x' | sh",
])
def test_printed_text_with_escapes_or_printf_options_is_not_known(command: str) -> None:
    assert analyse(command).opaque, command


def test_echo_keeps_option_words_after_the_text() -> None:
    from anna_common.shell.nested import printed_text

    def printed(code: str) -> str | None:
        word = printed_text(analyse(code).commands)
        return None if word is None else word.text

    assert printed("echo x -n") == "x -n" and printed("echo -n -E x") == "x"
    assert printed("echo -nx y") == "-nx y"  # not an option word: printed


def test_process_substitution() -> None:
    analysis = analyse("diff <(sort a) <(sort b)")
    assert programs("diff <(sort a) <(sort b)") == ["sort", "sort", "diff"]
    assert analysis.commands[0].origin == "process_substitution"


def test_nested_shell_code_is_analysed_recursively() -> None:
    analysis = analyse("bash -c \"sh -c 'eval \\\"rm -rf /x\\\"'\"")
    assert analysis.commands[-1].program == "rm"
    assert analysis.commands[-1].depth == 3


def test_heredoc_into_shell_and_into_file() -> None:
    into_shell = analyse("bash <<'EOF'\nrm -rf /x\nEOF\n")
    assert "rm" in [c.program for c in into_shell.commands]
    into_file = analyse("cat <<'EOF' > notes.txt\nrm -rf /x\nEOF\n")
    assert [c.program for c in into_file.commands] == ["cat"]
    assert into_file.commands[0].stdin.kind == "heredoc"


def test_herestring_and_echo_into_shell() -> None:
    assert "rm" in programs("bash <<< 'rm -f /x'")
    assert "rm" in programs("echo 'rm -f /x' | sh")
    assert "rm" in programs("printf 'rm -f /x' | bash")


def test_find_exec_and_xargs() -> None:
    analysis = analyse("find /srv -name '*.tmp' -exec rm -f {} + ; ls | xargs -I{} cp {} /tmp")
    by_program = {c.program: c for c in analysis.commands}
    assert by_program["rm"].origin == "find -exec"
    assert not by_program["rm"].args[-1].literal
    assert by_program["cp"].wrappers == ["xargs"]


def test_interpreters_are_given_code() -> None:
    py = analyse("python3 -c 'print(1)'").commands[0]
    assert py.code[0].language == "python" and py.code[0].text.text == "print(1)"
    perl = analyse("perl -ne 'print if /x/' f").commands[0]
    assert perl.code[0].language == "perl"
    awk = analyse("awk -F: '{print $1}' /etc/passwd").commands[0]
    assert awk.code[0].text.text == "{print $1}"


def test_opaque_forms() -> None:
    assert not analyse("echo 'unterminated").parse_ok
    assert analyse("$CMD -rf /").opaque
    assert analyse("bash script.sh").opaque
    assert analyse("eval \"$X\"").opaque


def test_comments_do_not_hide_or_add_commands() -> None:
    assert programs("ls # rm -rf /") == ["ls"]


def test_brace_expansion() -> None:
    cmd = analyse("rm -rf /{etc,usr}/x").commands[0]
    assert cmd.args[-1].alternatives == ("/etc/x", "/usr/x")


def test_write_targets() -> None:
    cases = {
        "echo x > /tmp/a 2>&1": ["/tmp/a"],
        "echo x >> ~/log": ["~/log"],
        "sed -i 's/a/b/' f1 f2": ["f1", "f2"],
        "sed -i.bak -e 's/a/b/' f": ["f"],
        "tee -a /etc/x /etc/y": ["/etc/x", "/etc/y"],
        "cp -r src dest": ["dest"],
        "cp -t /opt a b": ["/opt"],
        "mv a b": ["a", "b"],
        "install -m 644 a /etc/a": ["/etc/a"],
        "ln -sf /x /y": ["/y"],
        "rm -f a b": ["a", "b"],
        "truncate -s 0 /var/log/x": ["/var/log/x"],
        "chmod 600 ~/.ssh/id": ["~/.ssh/id"],
        "chown -R bob:bob /srv": ["/srv"],
        "dd if=/dev/zero of=/tmp/f": ["/tmp/f"],
        "curl -o /tmp/f https://x": ["/tmp/f"],
        "find /tmp/x -delete": ["/tmp/x"],
        "tar -xzf a.tgz -C /opt": ["/opt"],
    }
    for source, expected in cases.items():
        found = [t.word.text for c in analyse(source).commands for t in write_targets(c)]
        assert found == expected, (source, found)
