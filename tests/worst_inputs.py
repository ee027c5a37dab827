"""The worst inputs for the analyser's cost (issue 8, class 8), shared by the contract test
that holds them under 50 ms and by ``bench/assess.py``, which prints their timings."""

from __future__ import annotations


def worst_inputs() -> dict[str, str]:
    """Name → command: the costliest brace, glob, word, nesting and size shapes known."""
    return {
        "brace chain x20": "touch ~/x" + "{a,b}" * 20,
        "brace chain x400": "touch ~/x" + "{a,b}" * 400,
        "brace chain around $HOME": "touch $HOME/x" + "{a,b}" * 20,
        "nested braces": "echo " + "{a," * 1000 + "b" + "}" * 1000,
        "huge sequence": "touch ~/x{1..999999999}",
        "sequence product": "touch ~/{1..99999}{1..99999}{a..z}",
        "many expanded words": "touch " + " ".join(f"~/x{i}{{1..256}}" for i in range(15)),
        "10k words": "echo " + "a " * 10000,
        "1.3k words": "rm " + "ab " * 1300,
        "deep $(": "echo " + "$(" * 1000 + "ls" + ")" * 1000,
        "deep subshells": "(" * 2000 + "ls" + ")" * 2000,
        "deep groups": "{ " * 500 + "ls" + "; }" * 500,
        "long pipeline": " | ".join(["cat"] * 1000),
        "many ;": "ls;" * 1300,
        "big heredoc": "sh <<'E'\n" + "ls /tmp\n" * 450 + "E\n",
        "glob words": "cat " + " ".join(["/*/*/*"] * 500),
        "glob copy": "cp " + " ".join(["/*/*/*"] * 580) + " /x",
        "glob deletes": "rm -f " + " ".join(["/*/*/*"] * 250),
        "distinct glob deletes": "rm -rf " + " ".join(f"/*/*/*{i}" for i in range(250)),
        "glob chmod": "chmod 644 " + " ".join(["/**/**/*"] * 250),
        "braced globs": "touch " + " ".join(f"/*/*/{{a,b,c,d}}{i}" for i in range(120)),
        "250 system writes": "rm -f " + " ".join(f"/etc/x{i}" for i in range(250)),
        "long arithmetic": "(( " + "1+" * 1900 + "1 ))",
        "deep arithmetic": "echo $(( " + "(" * 1000 + "1" + ")" * 1000 + " ))",
        "eval chain": "eval '" + "eval " * 800 + "ls'",
        "bash -c chain": "bash -c '" + "bash -c " * 450 + "ls'",
        "sudo chain": "sudo " * 800 + "ls",
        "many substitutions": "echo " + "$(ls) " * 650,
        "many subscripts": "echo " + "${a[$i]} " * 450,
        "many aliases": "alias " + " ".join(f"a{i}='ls -l /tmp/x{i}'" for i in range(150)),
        "many callbacks": " ".join(f"mapfile -C 'ls /tmp/{i}' a < /dev/null;" for i in range(60)),
        "let with code": "let " + " ".join(f"x{i}=a[$(id)]" for i in range(300)),
        "long quoted": 'echo "' + "a" * 100000 + '"',
        # issue 22: exponential before (2^(n+1)-1 policy parts), RecursionError past ~200
        "nested $( x25": "echo " + "$(" * 25 + "x" + ")" * 25,
        "nested $( x30": "echo " + "$(" * 30 + "x" + ")" * 30,
        "nested quoted $( x600": "echo " + '"$(' * 600 + "x" + ')"' * 600,
        "long && chain": "ls && " * 680 + "ls",
        "deep if": "if true; then " * 280 + "ls" + "; fi" * 280,
        "brace list with no close": ";{" + "," * 4000,
        "extglobs": "ls " + "@(a|" * 1000,
        "deep subscripts": "echo ${a[" * 300 + "1" + "]}" * 300,
    }
