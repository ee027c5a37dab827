"""One verdict per meaning, for what a variable holds: a value bash would give the word.

Three classes (issue 21's follow-ups), each checked pair by pair against the plain spelling:

- **Tilde in assignments.** bash expands a tilde prefix right after the ``=`` of an assignment
  (``x=~+/a``, ``declare x=~root``, ``export x=~0``) and in each word brace expansion makes;
  a quoted ``~`` is a file name. Observed with bash 5.2 on a probe file of harmless
  ``printf '%s\\n'`` lines: ``x=~+/a`` → ``$PWD/a``, ``x=~-/a`` → ``$OLDPWD/a``,
  ``x=~root`` → ``/root``, ``x="~"/a`` → ``~/a``, ``of=~+/x`` → ``of=$PWD/x``,
  ``--file=~root/x`` → unchanged, ``'of'=~/x`` → unchanged, ``{~,x}`` → ``$HOME x``.
- **Values not known before the run.** Anything that writes a variable other than one literal
  assignment that runs for sure before the use (``read``, ``mapfile``, ``printf -v``,
  ``getopts``, ``for``, arithmetic, ``${x:=v}``, ``x+=v``, ``unset``, a branch, a subshell, a
  background job, a function, a name reference, ``source``) makes it unknown, and the path is
  judged as an unknown one (the same verdict as a variable never assigned); code run by
  another shell (``bash -c``) does not see the outer shell's unexported variables.
- **Still known.** The same value read back in the same shell is the literal path.
"""

from __future__ import annotations

from tests.contract.test_spelling_parity import _verdict, wrapped

TILDE_ASSIGNMENTS: dict[str, tuple[str, ...]] = {
    "recursive delete of the home": (
        "rm -rf ~/*", "x=~+/*; rm -rf $x", "x=~; rm -rf \"$x\"/*", "declare x=~+; rm -rf \"$x\"/*",
        "export x=~0; rm -rf \"$x\"/*", "x=~+0/; rm -rf \"$x\"*", "readonly x=~; rm -rf $x/*",
        "f() { local x=~+; rm -rf \"$x\"/*; }; f", "typeset x=~/; rm -rf \"${x}\"*",
        "rm -rf {~,/tmp/x}/*", "rm -rf {/tmp/x,~+}/*", "sudo rm -rf {~,/tmp/x}/*"),
    "root's home": (
        "rm -rf /root", "x=~root; rm -rf \"$x\"", "declare x=~root; rm -rf \"$x\"",
        "x=~root/; rm -rf \"$x\"", "export x=~root; rm -rf $x", "rm -rf {~root,/tmp/x}"),
    "world-writable /": (
        "sudo chmod -R 777 /", "cd /; x=~+; sudo chmod -R 777 \"$x\"",
        "cd / ; declare x=~+ ; sudo chmod -R 777 \"$x\"", "cd /; export x=~0; sudo chmod -R 777 $x",
        "cd /\nx=~+\nsudo chmod -R 777 \"$x\""),
    "shadow overwritten": (
        "dd if=/dev/zero of=/etc/shadow", "cd /etc; dd if=/dev/zero of=~+/shadow",
        "cd /etc; dd if=/dev/zero of=~0/shadow", "cd /etc; x=~+/shadow; dd if=/dev/zero of=$x",
        "cd /etc; sudo dd if=/dev/zero of=~+/shadow", "cd /etc; x=~+; cp /tmp/x \"$x/shadow\""),
    "previous directory: unknown": (
        "rm -rf \"$SOMEWHERE\"/x", "x=~-; rm -rf \"$x\"/x", "x=~-/x; rm -rf \"$x\"",
        "x=~1; rm -rf \"$x\"/x", "declare x=~-2/x; rm -rf \"$x\"", "x=~+1/x; rm -rf $x"),
    "a file named ~, not the home": (
        "rm -rf ./~", "x=\"~\"; rm -rf \"$x\"", "x=\\~; rm -rf \"$x\"", "x='~'; rm -rf \"$x\"",
        "x=\"~\"/; rm -rf \"$x\""),
    "a file named ~ after an option or a quoted name=": (
        "sort -o ./~/.bashrc /tmp/x", "sort --output=~/.bashrc /tmp/x",
        "sort -o~/.bashrc /tmp/x", "sort -uo~/.bashrc /tmp/x"),
    "root's file through dd": (
        "dd if=/dev/zero of=./~root/x", "dd if=/dev/zero 'of'=~root/x",
        'dd if=/dev/zero "of"=~root/x', "dd if=/dev/zero o\\f=~root/x"),
    "sort's output over passwd": (
        "sort --output=/etc/passwd /tmp/x", "sort -o /etc/passwd /tmp/x",
        "sort -o/etc/passwd /tmp/x", "sort -uo/etc/passwd /tmp/x", "sort -no/etc/passwd /tmp/x",
        "sort --output /etc/passwd /tmp/x", "sort --outp=/etc/passwd /tmp/x",
        "sort -rno /etc/passwd /tmp/x", "shuf -o /etc/passwd /tmp/x",
        "shuf -eo/etc/passwd a", "sudo sort -o/etc/passwd /tmp/x", "x=/etc; sort -o$x/passwd"),
}
"""Rule → the plain spelling, then spellings that put the same place in a variable, or
behind an option, as bash and the program read it."""

UNKNOWN_VALUES: dict[str, tuple[str, ...]] = {
    "recursive delete through an unknown variable": (
        'rm -rf "$NEVER_SET"/*',
        'x=/tmp/a; read x; rm -rf "$x"/*',
        'x=/tmp/a; read -r x <<< /; rm -rf "$x"/*',
        'x=/tmp/a; IFS= read -r y x; rm -rf "$x"/*',
        'x=/tmp/a; mapfile x < /tmp/l; rm -rf "$x"/*',
        'x=/tmp/a; readarray -t x < /tmp/l; rm -rf "$x"/*',
        'x=/tmp/a; read -a x; rm -rf "$x"/*',
        'x=/tmp/a; printf -v x %s /; rm -rf "$x"/*',
        'x=/tmp/a; printf -vx %s /; rm -rf "$x"/*',
        'x=/tmp/a; printf -v "x" %s /; rm -rf "$x"/*',
        'x=/tmp/a; getopts ab x; rm -rf "$x"/*',
        'x=/tmp/a; for x in / /tmp; do :; done; rm -rf "$x"/*',
        'x=/tmp/a; select x in /; do break; done; rm -rf "$x"/*',
        'x=/tmp/a; : "${x:=/}"; rm -rf "$x"/*',
        'x=/tmp/a; x+=/../..; rm -rf "$x"/*',
        'x=/tmp/a; x[0]=/; rm -rf "$x"/*',
        'x=/tmp/a; unset x; rm -rf "$x"/*',
        'x=/tmp/a; unset -v x; rm -rf "$x"/*',
        'x=/tmp/a; x=/tmp/b; rm -rf "$x"/*',
        'x=/tmp/a; declare x=/; rm -rf "$x"/*',
        'x=/tmp/a; export x=/tmp/b; rm -rf "$x"/*',
        'x=/tmp/a; f() { x=/; }; f; rm -rf "$x"/*',
        'x=/tmp/a; let x=1; rm -rf "$x"/*',
        'x=/tmp/a; (( x = 1 )); rm -rf "$x"/*',
        'x=/tmp/a; declare -n r=x; read r; rm -rf "$x"/*',
        'x=/tmp/a; typeset -n r=x; r=/; rm -rf "$x"/*',
        'x=/tmp/a; y=x; declare -n r=$y; r=/; rm -rf "$x"/*',
        'x=/tmp/a; declare "$(echo x)=/"; rm -rf "$x"/*',
        'x=/tmp/a; eval "$(cat /tmp/e)"; rm -rf "$x"/*',
        'x=/tmp/a; source /tmp/e; rm -rf "$x"/*',
        'x=/tmp/a; . /tmp/e; rm -rf "$x"/*',
        'x=/tmp/a; $CMD; rm -rf "$x"/*',
        'x=/tmp/a; wait -n -p x; rm -rf "$x"/*',
        'x=/tmp/a; x=/tmp/b f; rm -rf "$x"/*',
        'rm -rf "$x"/*; x=/tmp/a',
        'true || x=/tmp/a; rm -rf "$x"/*',
        'false && x=/tmp/a; rm -rf "$x"/*',
        'if false; then x=/tmp/a; fi; rm -rf "$x"/*',
        '(x=/tmp/a); rm -rf "$x"/*',
        'x=/tmp/a | true; rm -rf "$x"/*',
        'x=/tmp/a & rm -rf "$x"/*',
        'while false; do x=/tmp/a; done; rm -rf "$x"/*',
        'x=/tmp/a; bash -c \'rm -rf "$x"/*\'',
        'x=/tmp/a; sudo sh -c \'rm -rf "$x"/*\'',
        'bash -c \'x=/tmp/a\'; rm -rf "$x"/*',
        'ref=HOME; rm -rf "${!ref}"/*',
        'rm -rf "${!HO*}"/*',
        'declare -n r=a; a[0]=/tmp/a; rm -rf "${r[0]}"/*',
        'HOME=/; rm -rf "$HOME"/*',
        'HOME=/tmp/a; read HOME; rm -rf "$HOME"/*',
        'x=/tmp/a; IFS=/; rm -rf $x/*',
        'x="/tmp/a /"; rm -rf $x/*',
        'x=/tmp/a; coproc x { cat; }; rm -rf "$x"/*',
        'x=/tmp/a; mapfile -C \'x=/ #\' -c 1 y < /tmp/l; rm -rf "$x"/*',
        'x=/tmp/a; shopt -s expand_aliases; alias cd=\'x=/; cd\'; rm -rf "$x"/*',
        'x=/tmp/a; export x+=/..; rm -rf "$x"/*',
        'x=/tmp/a; printf -v x[0] /; rm -rf "$x"/*',
        'x=/tmp/a; local x; rm -rf "$x"/*',
        'x=/tmp/a; trap \'x=/\' DEBUG; rm -rf "$x"/*',
        'echo / | read x; rm -rf "$x"/*',
        'x=/tmp/a; export x; sudo -E bash -c \'rm -rf "$x"/*\'',
        'x=$PWD; rm -rf "$x"/*',
        'x=/tmp/a; declare "x=/"; rm -rf "$x"/*',
    ),
    "recursive permissions through an unknown variable": (
        'sudo chmod -R 777 "$NEVER_SET"',
        'x=/tmp/a; read x; sudo chmod -R 777 "$x"',
        'x=/tmp/a; printf -v x /; sudo chmod -R 777 "$x"',
        'x=/tmp/a; mapfile -t x; sudo chmod -R 777 "$x"',
        'x=/tmp/a; for x in /; do :; done; sudo chmod -R 777 "$x"',
        'x=/tmp/a; bash -c \'sudo chmod -R 777 "$x"\'',
        'cd / && x=~+; sudo chmod -R 777 "$x"',
    ),
}
"""Rule → the plain spelling (a variable never assigned), then spellings whose variable is no
better known at the time of use."""

STILL_KNOWN: dict[str, tuple[str, ...]] = {
    "recursive delete of a temporary folder": (
        "rm -rf /tmp/a/*", 'x=/tmp/a; rm -rf "$x"/*', 'x=/tmp/a; (rm -rf "$x"/*)',
        'x=/tmp/a; echo "$(rm -rf "$x"/*)"', 'x=/tmp/a; f() { rm -rf "$x"/*; }; f',
        'x=/tmp/a && rm -rf "$x"/*', '{ x=/tmp/a; }; rm -rf "$x"/*',
        'bash -c \'x=/tmp/a; rm -rf "$x"/*\'',
        'declare x=/tmp/a; rm -rf "$x"/*', 'declare -n r=x; x=/tmp/a; rm -rf "$r"/*',
        'x=/tmp/a\nrm -rf "$x"/*', 'x=/tmp/a; y=/tmp/b; rm -rf "$x"/* "$y"/*',
        'x=/tmp/a; readonly x; rm -rf "$x"/*', 'x=/tmp/a; shopt -s nullglob; rm -rf "$x"/*',
        'x=/tmp/a; rm -rf "${x}"/*', 'x=/tmp/a; export x; rm -rf "$x"/*'),
}
"""Rule → the plain spelling, then spellings whose variable is known where it is used."""


_PROGRAM_SPELLINGS = ("sudo rm", "\\rm", "/usr/bin/rm", "command rm", "r''m")
"""``rm`` as bash and sudo find it all the same."""


def all_pairs() -> list[tuple[str, str, str]]:
    """(rule, plain spelling, equivalent spelling), each behind the wrappers that do not change
    what it does, and with ``rm`` spelled each way bash runs the same program."""
    pairs: list[tuple[str, str, str]] = []
    for table in (TILDE_ASSIGNMENTS, UNKNOWN_VALUES, STILL_KNOWN):
        for rule, (plain, *others) in table.items():
            for other in others:
                pairs.append((rule, plain, other))
                if "\n" not in other:
                    pairs.extend((rule, plain, form) for form in list(wrapped(other))[1:])
                if plain.startswith("rm -rf") and "sudo" not in other:
                    pairs.extend((rule, plain.replace("rm", spelled, 1),
                                  other.replace("rm -rf", spelled + " -rf"))
                                 for spelled in _PROGRAM_SPELLINGS)
    return pairs


def test_every_value_spelling_gets_the_plain_verdict() -> None:
    pairs = all_pairs()
    differing = [(rule, plain, other, _verdict(plain), _verdict(other))
                 for rule, plain, other in pairs if _verdict(plain) != _verdict(other)]
    assert not differing, differing[:5]
    assert len(pairs) >= 150


def test_the_plain_verdicts_are_the_ones_meant() -> None:
    """The plain spellings are what the classes claim: an unknown place is judged as the worst
    it can be, a known one as itself (so the parity above cannot pass by everything being
    unknown)."""
    assert _verdict("rm -rf ~/*")[1] and _verdict('rm -rf "$NEVER_SET"/*')[1]
    assert _verdict("sudo chmod -R 777 /")[1]
    assert not _verdict("rm -rf ./~")[1] and not _verdict("rm -rf /tmp/a/*")[1]
    assert str(_verdict("rm -rf /tmp/a/*")[0]) != str(_verdict('rm -rf "$NEVER_SET"/*')[0])
