"""``annactl shell-integration bash|zsh|fish``: a key binding (Alt-a) that turns the request
typed on the prompt into a command line, for the person to read, edit and run.

The widget hands the line to ``annactl suggest`` (:mod:`annactl.commands.suggest`) and puts
what it prints in place of the request: the command with ``# anna: RISK …`` beside it, or a
comment (an answer, a refusal) that runs nothing. Nothing runs until the person presses
Enter; on an error the request stays on the line. Install: ``eval "$(annactl
shell-integration bash)"`` in ~/.bashrc (docs/usage.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from annactl.ui.console import Consoles

BASH = r"""# Anna's shell widget for bash: type a request, press Alt-a, edit the command, run it.
# Install: eval "$(annactl shell-integration bash)"   (in ~/.bashrc)
_anna_widget() {
    local request=$READLINE_LINE line
    [[ -n ${request//[[:space:]]/} ]] || return 0
    if line=$(command annactl suggest -- "$request"); then
        READLINE_LINE=$line
        READLINE_POINT=${#READLINE_LINE}
    fi
}
bind -x '"\ea": _anna_widget'
"""

ZSH = r"""# Anna's shell widget for zsh: type a request, press Alt-a, edit the command, run it.
# Install: eval "$(annactl shell-integration zsh)"   (in ~/.zshrc)
_anna_widget() {
    local request=$BUFFER line
    [[ -n ${request//[[:space:]]/} ]] || return 0
    zle -I
    if line=$(command annactl suggest -- "$request"); then
        BUFFER=$line
        CURSOR=${#BUFFER}
    fi
    zle reset-prompt
}
zle -N _anna_widget
bindkey '\ea' _anna_widget
"""

FISH = r"""# Anna's shell widget for fish: type a request, press Alt-a, edit the command, run it.
# Install: annactl shell-integration fish | source   (in ~/.config/fish/config.fish)
function _anna_widget
    set -l request (commandline)
    if test -z (string trim -- "$request")
        return
    end
    set -l line (command annactl suggest -- "$request")
    and commandline -r -- "$line"
    commandline -f repaint
end
bind \ea _anna_widget
"""

WIDGETS = {"bash": BASH, "zsh": ZSH, "fish": FISH}
"""The widget of each shell."""


def run(consoles: Consoles, shell: str, *, as_json: bool = False) -> int:
    """Print the widget for ``shell`` on stdout (``--json``: one document holding it)."""
    from anna_common.errors import UsageError

    script = WIDGETS.get(shell)
    if script is None:
        raise UsageError(f"no widget for {shell!r}", hint="annactl shell-integration bash, "
                         "zsh or fish")
    if as_json:
        from annactl.ui.console import emit_json

        emit_json(consoles, {"code": "OK", "shell": shell, "script": script})
        return ExitStatus.SUCCESS
    consoles.out.file.write(script)
    consoles.out.file.flush()
    return ExitStatus.SUCCESS
