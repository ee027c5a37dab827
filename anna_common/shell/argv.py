"""Reading an argument vector: operands versus options, the way most GNU tools parse them."""

from __future__ import annotations

from anna_common.shell.words import Word


def operands(args: list[Word], value_opts: frozenset[str] = frozenset()) -> list[Word]:
    """Non-option arguments; options in ``value_opts`` consume the next word."""
    out: list[Word] = []
    i = 0
    after_dashdash = False
    while i < len(args):
        word = args[i]
        text = word.text
        if after_dashdash or not word.literal or not text.startswith("-") or text == "-":
            out.append(word)
            i += 1
            continue
        if text == "--":
            after_dashdash = True
        elif text.startswith("--"):
            if "=" not in text and text in value_opts:
                i += 1
        elif text[:2] in value_opts and len(text) == 2:
            i += 1
        i += 1
    return out


def options(args: list[Word]) -> set[str]:
    """Every option letter and long option given (``-rf`` → ``-r``, ``-f``)."""
    seen: set[str] = set()
    for word in args:
        text = word.text
        if text == "--":
            break
        if not word.literal or not text.startswith("-") or text == "-":
            continue
        if text.startswith("--"):
            seen.add(text.split("=", 1)[0])
        else:
            seen.update("-" + c for c in text[1:])
    return seen


def option_values(args: list[Word], short: str | None, long: str, *,
                  attached: bool = False) -> list[Word]:
    """The values an option is given, in order: ``-s V``, ``--long V``, ``--long=V``, and
    ``-sV`` when ``attached``."""
    found: list[Word] = []
    for i, word in enumerate(args):
        text = word.text
        if text in (short, long) and i + 1 < len(args):
            found.append(args[i + 1])
        elif text.startswith(long + "="):
            found.append(word.after(len(long) + 1))
        elif attached and short and text.startswith(short) and len(text) > len(short) and \
                not text.startswith("--"):
            found.append(word.after(len(short)))
    return found


def dest_and_sources(args: list[Word], value_opts: frozenset[str]
                     ) -> tuple[Word | None, list[Word]]:
    """Destination and sources of a cp/mv/install/ln argument list (``-t DIR`` aware)."""
    given = option_values(args, "-t", "--target-directory")
    target_dir = given[-1] if given else None
    ops = operands(args, value_opts | frozenset({"-t", "--target-directory"}))
    if target_dir is not None:
        return target_dir, ops
    if len(ops) >= 2:
        return ops[-1], ops[:-1]
    return None, ops


def find_starts(args: list[Word]) -> list[Word]:
    """The start points of ``find`` (the words before its first expression word; ``.`` if none)."""
    starts: list[Word] = []
    for word in args:
        if word.text.startswith(("-", "(", "!")) and word.literal:
            break
        starts.append(word)
    return starts or [Word.of(".")]


def listed_below(program: str | None, args: list[Word]) -> list[Word]:
    """Where the paths a listing command prints lie: ``find``'s start points, ``ls``'s
    operands (``.`` when none). Empty for any other program: its output is unknown."""
    if program == "find":
        return find_starts(args)
    if program == "ls":
        return operands(args) or [Word.of(".")]
    return []


def xargs_files(options: list[Word]) -> list[Word]:
    """The files ``xargs -a FILE`` / ``--arg-file=FILE`` reads its input from."""
    return option_values(options, "-a", "--arg-file", attached=True)


def xargs_replace(options: list[Word]) -> str | None:
    """The replacement string of ``xargs -I R`` / ``-iR`` / ``--replace[=R]``, if any."""
    for i, word in enumerate(options):
        text = word.text
        if text == "-I" and i + 1 < len(options):
            return options[i + 1].text or None
        if text.startswith("-I") and len(text) > 2:
            return text[2:]
        if text in ("-i", "--replace"):
            return "{}"
        if text.startswith(("-i", "--replace=")):
            return text.split("=", 1)[1] if "=" in text else text[2:]
    return None
