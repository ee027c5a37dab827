"""Shell builtins that change the shell's state, and arithmetic that may run code.

A builtin that sets a variable, an alias, a hashed path or a callback is not read-only: the
next command reads that state. Worse, bash evaluates array subscripts and arithmetic *when
it uses them* and runs any ``$(...)`` it finds there, even in text that came from single
quotes or a file: ``let 'x[$(id > /tmp/p)]=1'`` runs ``id``. So every arithmetic or subscript
context whose text is not a plain literal is at least MEDIUM, and code found in it is judged
as the command it is. Plain literal arithmetic (``(( 1 + 2 ))``, ``${a[0]}``) is unchanged.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out
from anna_common.risk.rules.everycommand import code_variable
from anna_common.risk.rules.readonly import read_only
from anna_common.risk.writes import options
from anna_common.shell.arith import has_code, plain, subscript_index, unquote
from anna_common.shell.words import Word

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import Analysis, SimpleCommand

_HEREDOC_END = "ANNA_ARITHMETIC_TEXT"
_IDENT = re.compile(r"(?<![\w$])[A-Za-z_]\w*|(?<=\$)[A-Za-z_]\w*|(?<=\$\{)[A-Za-z_]\w*")


def evaluate(text: str, out: Out, what: str, *, code_seen: bool = False) -> bool:
    """Judge ``text`` that bash evaluates as arithmetic; True when it is not plain.

    ``code_seen``: its substitutions were already analysed (they were part of the tree).
    """
    if plain(text, out.tainted):
        return False
    if not code_seen and has_code(text):
        _judge_code(text, out)
    out.medium(Code.ARITHMETIC_EVAL, f"{what} evaluates {text.strip()[:50]!r} as arithmetic; "
               "a command substitution in it would run", target=what)
    return True


def _judge_code(text: str, out: Out) -> None:
    """Code inside arithmetic runs: judge it as shell code (an unquoted heredoc body is
    expanded exactly like the arithmetic text would be)."""
    if out.nested is None or _HEREDOC_END in text:
        out.high(Code.OPAQUE, "arithmetic text holds code Anna cannot analyse")
        return
    out.nested(f": <<{_HEREDOC_END}\n{text}\n{_HEREDOC_END}\n", out)


def prepare(analysis: Analysis, out: Out) -> None:
    """Facts every rule needs: which variables hold run-time text, which options are on."""
    tainted = set(analysis.tainted)
    refs = analysis.namerefs
    for cmd in analysis.commands:
        filled = [refs.get(n) or n for n in filled_variables(cmd)]
        tainted.update(filled)
        for name in filled:
            if code_variable(name):
                out.high(Code.EMBEDDED_SHELL, f"{cmd.program} sets {name} from its input; "
                         f"{name} names the programs or libraries that run", target=name)
        if cmd.program == "shopt" and any(w.text == "-s" for w in cmd.args):
            # expand_aliases, dotglob, nocaseglob, extglob change how later text is read
            out.flags.update(w.text for w in cmd.args if not w.text.startswith("-"))
    if any(name == "GLOBIGNORE" for name, _ in analysis.assignments):
        out.flags.add("dotglob")  # a non-empty GLOBIGNORE turns dotglob on
    # x=y where y holds run-time text: evaluating x evaluates y
    values = {n.split("[", 1)[0]: v.text for n, v in analysis.assignments if v.literal}
    values.update({ref: target for ref, target in refs.items() if target})
    for _ in range(len(values)):
        grown = {n for n, v in values.items() if v in tainted} - tainted
        if not grown:
            break
        tainted |= grown
    out.tainted = frozenset(tainted)


def filled_variables(cmd: SimpleCommand) -> list[str]:
    """Variables a builtin fills with text from its input (read, mapfile, printf -v, ...)."""
    prog = cmd.program
    texts = [w.text for w in cmd.args]
    if prog in ("read", "mapfile", "readarray", "getopts"):
        names = _operands(cmd.args, _READ_VALUES if prog == "read" else _MAPFILE_VALUES)
        if prog == "getopts":
            names = [*names[1:2], Word.of("OPTARG")]
        found = [n.text.split("[", 1)[0] for n in names] or ["REPLY" if prog == "read" else
                                                              "MAPFILE"]
        if prog == "read" and "-a" in texts:
            found.append(texts[texts.index("-a") + 1] if texts.index("-a") + 1 < len(texts)
                         else "REPLY")
        return found
    if prog == "printf" and "-v" in texts and texts.index("-v") + 1 < len(texts):
        return [texts[texts.index("-v") + 1].split("[", 1)[0]]
    return []


_READ_VALUES = frozenset({"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"})
_MAPFILE_VALUES = frozenset({"-d", "-n", "-O", "-s", "-u", "-C", "-c"})


def _operands(args: list[Word], values: frozenset[str]) -> list[Word]:
    found: list[Word] = []
    skip = False
    for word in args:
        if skip:
            skip = False
        elif word.text in values:
            skip = True
        elif not (word.text.startswith("-") and len(word.text) > 1):
            found.append(word)
    return found


def _value_of(args: list[Word], option: str) -> Word | None:
    for i, word in enumerate(args[:-1]):
        if word.text == option:
            return args[i + 1]
    return None


def _state(cmd: SimpleCommand, out: Out, message: str) -> None:
    out.low(Code.SHELL_STATE, f"{cmd.program} {message}; not read-only", target=cmd.program)


def let(cmd: SimpleCommand, out: Out) -> None:
    """``let EXPR...``: every argument is arithmetic."""
    flagged = [evaluate(w.text, out, "let") for w in cmd.args]  # judge every argument
    if not any(flagged):
        _state(cmd, out, "sets shell variables")


def declare(cmd: SimpleCommand, out: Out) -> None:
    """declare/typeset/local/export/readonly/unset: subscripts and ``-i`` values are
    arithmetic; ``-n`` makes a name refer to whatever its value names, evaluated later."""
    prog = cmd.program or "declare"
    flags = "".join(w.text[1:] for w in cmd.args if w.text[:1] in "-+" and len(w.text) > 1)
    if prog == "export":
        flags = flags.replace("n", "")  # export -n removes the export attribute
    if "n" in flags and prog != "unset":
        out.medium(Code.SHELL_STATE, f"{prog} -n makes a name refer to another variable, "
                   "resolved (and its subscript evaluated) later", target=prog)
    found = False
    for word in cmd.args:
        if word.text[:1] in "-+":
            continue
        name, eq, value = word.text.partition("=")
        index = subscript_index(name.rstrip("+"))
        if index is not None:
            found = evaluate(index, out, prog) or found
        value = unquote(value)
        if eq and ("i" in flags or "n" in flags) and not value.startswith("("):
            found = evaluate(value, out, f"{prog} -{'n' if 'n' in flags else 'i'}") or found
    if not found and "n" not in flags:
        read_only(cmd, out)


def printf(cmd: SimpleCommand, out: Out) -> None:
    """``printf -v VAR`` assigns (VAR may carry a subscript); otherwise it only prints."""
    target = _value_of(cmd.args, "-v")
    if target is None:
        out.read_only()
        return
    index = subscript_index(target.text)
    if index is None or not evaluate(index, out, "printf -v"):
        _state(cmd, out, "-v sets a shell variable")


def read(cmd: SimpleCommand, out: Out) -> None:
    """read/readarray/mapfile/getopts fill variables from their input; ``mapfile -C`` runs a
    callback; a subscripted name is arithmetic."""
    prog = cmd.program or "read"
    values = _READ_VALUES if prog in ("read", "getopts") else _MAPFILE_VALUES
    for word in _operands(cmd.args, values):
        index = subscript_index(word.text)
        if index is not None:
            evaluate(index, out, prog)
    origin = _value_of(cmd.args, "-O")
    if origin is not None:
        evaluate(origin.text, out, f"{prog} -O")
    callback = _value_of(cmd.args, "-C")
    if callback is not None:
        _callback(callback, out, f"{prog} -C")
    _state(cmd, out, "sets shell variables from its input")


def _callback(word: Word, out: Out, what: str) -> None:
    """Code a builtin will run (``mapfile -C``, ``complete -C``, ``bind -x``)."""
    if word.literal and out.nested is not None:
        out.nested(word.text, out)
    else:
        out.high(Code.DYNAMIC_CODE, f"{what} runs code that is only known at run time",
                 target=what)
    out.medium(Code.SHELL_STATE, f"{what} hands the shell code to run later ({word.text[:50]})",
               target=what)


def hash_(cmd: SimpleCommand, out: Out) -> None:
    """``hash -p PATH NAME`` makes NAME run PATH; -r/-d forget entries."""
    opts = options(cmd.args)
    if "-p" in opts:
        out.medium(Code.SHELL_STATE, "hash -p makes a command name run another file",
                   target="hash")
    elif opts & {"-r", "-d"} or any(not w.text.startswith("-") for w in cmd.args):
        _state(cmd, out, "changes which files command names run")
    else:
        out.read_only()


def alias(cmd: SimpleCommand, out: Out) -> None:
    """An alias definition is code; it runs in this shell once ``expand_aliases`` is on."""
    defined = [w for w in cmd.args if "=" in w.text and not w.text.startswith("-")]
    if not defined:
        out.read_only()
        return
    expands = "expand_aliases" in out.flags
    for word in defined:
        body = word.text.split("=", 1)[1]
        if out.nested is not None and word.literal:
            if expands:
                out.nested(body, out)
            else:
                # not expanded in a non-interactive shell unless something turns it on
                # (bash -O expand_aliases, an rc file): a ban in it still counts
                scratch = Out(out.ctx, nested=out.nested, nested_runs=out.nested_runs)
                out.nested(body, scratch)
                out.nested_runs = scratch.nested_runs  # the same budget
                out.reasons.extend(r for r in scratch.reasons if r.banned or
                                   r.code == Code.TOO_LARGE)
    if expands:
        out.medium(Code.SHELL_STATE, "alias with expand_aliases on changes what later command "
                   "names run", target="alias")
    else:
        _state(cmd, out, "defines an alias")


def shopt(cmd: SimpleCommand, out: Out) -> None:
    """``shopt -s/-u`` changes how the shell reads what follows; listing is read-only."""
    if options(cmd.args) & {"-s", "-u"}:
        _state(cmd, out, "changes shell options")
    else:
        out.read_only()


def test(cmd: SimpleCommand, out: Out) -> None:
    """``test``/``[``: ``-v NAME[SUBSCRIPT]`` evaluates the subscript; the integer operators of
    ``test`` compare numbers without evaluating expressions, so they stay read-only."""
    args = cmd.args
    for i, word in enumerate(args[:-1]):
        if word.text == "-v":
            index = subscript_index(args[i + 1].text)
            if index is not None:
                evaluate(index, out, f"{cmd.program} -v")
    out.read_only()


def complete(cmd: SimpleCommand, out: Out) -> None:
    """complete/compgen ``-C CMD`` run a command (compgen at once), ``-F FUNC`` a function."""
    prog = cmd.program or "complete"
    command = _value_of(cmd.args, "-C")
    if command is not None:
        _callback(command, out, f"{prog} -C")
        return
    if prog == "compgen" and _value_of(cmd.args, "-F") is not None:
        out.medium(Code.SHELL_STATE, "compgen -F runs a shell function", target="compgen")
        return
    if prog == "compgen" or (cmd.args and all(w.text == "-p" for w in cmd.args)):
        out.read_only()
    else:
        _state(cmd, out, "changes completion settings")


def fc(cmd: SimpleCommand, out: Out) -> None:
    """``fc -l`` lists history; anything else re-runs history or opens an editor."""
    opts = options(cmd.args)
    if "-l" in opts and not opts & {"-e", "-s"}:
        out.read_only()
        return
    out.high(Code.DYNAMIC_CODE, "fc re-runs commands from the shell history (or opens an "
             "editor); Anna cannot see them", target="fc")


_BIND_LIST = frozenset({"-p", "-P", "-v", "-V", "-s", "-S", "-l", "-X"})


def bind(cmd: SimpleCommand, out: Out) -> None:
    """``bind -x 'KEYSEQ: CODE'`` binds shell code to a key; listing options only print."""
    args = cmd.args
    for i, word in enumerate(args):
        if word.text == "-x" and i + 1 < len(args):
            code = args[i + 1]
            _, _, body = code.text.partition(":")
            _callback(Word.of(unquote(body.strip())) if code.literal else code, out,
                      "bind -x")
            return
    if args and all(w.text in _BIND_LIST for w in args):
        out.read_only()
    else:
        _state(cmd, out, "changes key bindings")


def enable(cmd: SimpleCommand, out: Out) -> None:
    """``enable -f LIB`` loads a shared object into the shell (HIGH); -n/-d change builtins."""
    flags = "".join(w.text[1:] for w in cmd.args if w.text.startswith("-"))
    if "f" in flags:
        out.high(Code.LIBRARY_PRELOAD, "enable -f loads a shared library into the shell",
                 target="enable")
    elif ("n" in flags or "d" in flags) or any(not w.text.startswith("-") for w in cmd.args):
        _state(cmd, out, "switches builtins on or off")
    else:
        out.read_only()


BUILTIN_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    "let": let,
    **dict.fromkeys(("declare", "typeset", "local", "export", "readonly", "unset"), declare),
    "printf": printf,
    **dict.fromkeys(("read", "mapfile", "readarray", "getopts"), read),
    "hash": hash_,
    "alias": alias,
    "shopt": shopt,
    **dict.fromkeys(("test", "["), test),
    **dict.fromkeys(("complete", "compgen"), complete),
    "fc": fc,
    "bind": bind,
    "enable": enable,
}
"""Rules for builtins that change the shell's state or evaluate arithmetic."""


def judge_arithmetic(analysis: Analysis, out: Out) -> None:
    """Arithmetic contexts found in the command's grammar (their code was already analysed)."""
    seen: set[str] = set()
    values: dict[str, list[str]] = {}
    for name, value in analysis.assignments:
        if value.literal:
            values.setdefault(name.split("[", 1)[0], []).append(value.text)
    expanded: set[str] = set()
    integers = integer_names(analysis)
    for name, value in _all_assignments(analysis):
        if name.split("[", 1)[0] in integers and value.text not in seen:
            # declare -i x; x='a[$(cmd)]': the quoted code was never part of the tree
            seen.add(value.text)
            evaluate(value.text, out, name, code_seen=not value.literal)
    for text in analysis.arithmetic:
        if text not in seen:
            seen.add(text)
            if evaluate(text, out, "bash", code_seen=True):
                _values_evaluated(text, values, out, seen, expanded)


def integer_names(analysis: Analysis) -> set[str]:
    """Names given the integer attribute (``declare -i x``): assigning them is arithmetic."""
    names: set[str] = set()
    for cmd in analysis.commands:
        if cmd.program in ("declare", "typeset", "local", "export", "readonly") and any(
                w.text.startswith("-") and "i" in w.text for w in cmd.args):
            names.update(w.text.split("=", 1)[0].split("[", 1)[0] for w in cmd.args
                         if not w.text.startswith(("-", "+")))
    return names


def _all_assignments(analysis: Analysis) -> list[tuple[str, Word]]:
    found = list(analysis.assignments)
    for cmd in analysis.commands:
        found.extend(cmd.assignments)
    return found


def _values_evaluated(text: str, values: dict[str, list[str]], out: Out,
                      seen: set[str], expanded: set[str]) -> None:
    """x='a[$(cmd)]'; (( x )): evaluating x evaluates its value, and runs cmd.

    ``expanded``: the names whose values were already followed for this command: each is
    followed once, however many arithmetic texts name it (nested subscripts name the same
    ones again at every level, which made this quadratic in the nesting)."""
    names = [m.group() for m in _IDENT.finditer(text)]
    while names:
        name = names.pop()
        if name in expanded:
            continue
        expanded.add(name)
        for value in values.get(name, []):
            if value in seen:
                continue
            seen.add(value)
            if has_code(value):
                evaluate(value, out, name)
            names.extend(m.group() for m in _IDENT.finditer(value))
