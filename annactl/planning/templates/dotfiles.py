"""Append one line to a shell or editor dotfile ("add an alias ll='ls -la' to my bashrc").

The line is checked (one line, printable, bounded) and passed to ``printf`` as one
single-quoted word, so bash never reads it as code while the command runs; it *is* code
the next time the shell starts, which is why Anna's own risk for the step is what the
person confirms. The daemon previews the file's diff and backs the file up before it
changes, so the rollback restores it exactly.
"""

from __future__ import annotations

import re
import shlex

from annactl.planning.templates.base import Context, PlanBuilder, TemplateMatch

_APPEND = re.compile(r"(?i)^(?:please )?(?:add|append|put)(?: the line| a line| line)? (.+?) "
                     r"(?:to|into|at the end of|in) (?:my |the )?(\S+)[.! ]*$")
_ARTICLE = re.compile(r"(?i)^(?:an? |the )(?=alias |export |set |source |bind )")
DOTFILES = {"bashrc": ".bashrc", ".bashrc": ".bashrc", "~/.bashrc": ".bashrc",
            "zshrc": ".zshrc", ".zshrc": ".zshrc", "~/.zshrc": ".zshrc",
            "bash_profile": ".bash_profile", ".bash_profile": ".bash_profile",
            "~/.bash_profile": ".bash_profile", "profile": ".profile", ".profile": ".profile",
            "~/.profile": ".profile", "vimrc": ".vimrc", ".vimrc": ".vimrc",
            "~/.vimrc": ".vimrc", "inputrc": ".inputrc", ".inputrc": ".inputrc",
            "~/.inputrc": ".inputrc", "tmux.conf": ".tmux.conf", ".tmux.conf": ".tmux.conf",
            "~/.tmux.conf": ".tmux.conf", "fish config": ".config/fish/config.fish",
            "~/.config/fish/config.fish": ".config/fish/config.fish"}
"""Names people give a dotfile → its path under the home directory."""
_LINE_OK = re.compile(r"^[^\x00-\x1f\x7f]{1,300}$")
_BARE_ALIAS = re.compile(r"^alias\s+([A-Za-z0-9_.:+-]{1,64})$")
"""``alias ll`` with no ``=``: bash prints "alias: ll: not found" in every new shell."""


def _line(raw: str) -> str | None:
    line = raw.strip()
    if len(line) >= 2 and line[0] == line[-1] == "`":
        line = line[1:-1].strip()
    line = _ARTICLE.sub("", line)
    return line if _LINE_OK.match(line) else None


def append_line(ctx: Context) -> TemplateMatch | None:
    """"add LINE to my bashrc" → ``printf '%s\\n' LINE >> ~/.bashrc`` (previewed, backed up)."""
    found = _APPEND.match(ctx.request)
    if found is None:
        return None
    name = found.group(2).lower().strip("'\"")
    if name not in DOTFILES:
        return None
    template = "dotfile_append_v1"
    line = _line(found.group(1))
    if line is None:
        return TemplateMatch(template, True, rejected="the line to add must be one printable "
                             "line of at most 300 characters")
    path = f"{ctx.home.rstrip('/')}/{DOTFILES[name]}"
    bare = _BARE_ALIAS.match(line)
    if bare is not None:
        return _ask_definition(ctx, template, bare.group(1), path)
    quoted_path, quoted_line = shlex.quote(path), shlex.quote(line)
    builder = PlanBuilder(ctx, template, [f"Add one line to {path}"])
    builder.check("already_there", f"Look for the line in {path} already",
                  f"grep -nxF -e {quoted_line} {quoted_path}", required=False)
    builder.step("append", f"Append the line to {path}",
                 f"printf '%s\\n' {quoted_line} >> {quoted_path}")
    plan = builder.build(
        f"Appends one line to {path}; the daemon shows the diff first and keeps a copy of "
        "the file, so the rollback restores it exactly.",
        f"I will add this line at the end of {path}: {line}  It takes effect in new shells "
        "(or after `source` in this one). If the check finds the line already there, you "
        "can decline.")
    return TemplateMatch(template, True, plan)


def _ask_definition(ctx: Context, template: str, alias: str, path: str) -> TemplateMatch:
    """An alias named without its definition: a question, weakly (a model may still plan
    the usual meaning; offline, the person is asked), never the line ``alias NAME``."""
    builder = PlanBuilder(ctx, template, [f"Define the alias {alias} in {path}"])
    plan = builder.build(f"The request names the alias {alias} but not what it runs; "
                         f"appending 'alias {alias}' alone would make every new shell "
                         "print an error.",
                         f"What should {alias} run? Say the whole definition, in the shape: "
                         f"add alias {alias}='COMMAND' to my {path.rsplit('/', 1)[-1]}")
    return TemplateMatch(template, False, plan)
