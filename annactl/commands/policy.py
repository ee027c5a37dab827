"""``annactl policy show`` and ``annactl policy check "CMD"``: the daemon's policy, read-only.

Both ask the daemon: it is the one that enforces the policy, reads the administrator's
file where it was configured to, and judges a command with its own analysis and context.
Rule text comes from files an administrator or the user wrote, command text from the
person: both are printed through :func:`annactl.ui.console.inert`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from anna_common.policy.model import Rule
    from anna_common.protocol.policy import PolicyCheckResponse, PolicyView
    from annactl.ui.console import Consoles

_STYLE = {"deny": "bold red", "ask": "yellow", "allow": "green", "default": "dim"}


def show(consoles: Consoles, *, as_json: bool) -> int:
    """Print the rules in force for the caller, in the order they are evaluated."""
    from annactl.core.config import load_settings
    from annactl.core.daemon_client import connect
    from annactl.ui.console import emit_json

    policy = connect(load_settings()).policy_view()
    if as_json:
        emit_json(consoles, policy.model_dump(mode="json"))
    else:
        _print_view(consoles, policy)
    return ExitStatus.SUCCESS


def check(consoles: Consoles, command: str, *, as_json: bool) -> int:
    """Print the decision, the matched rule and the tier for ``command`` as a plan step."""
    from anna_common.errors import UsageError
    from annactl.core.config import load_settings
    from annactl.core.daemon_client import connect
    from annactl.ui.console import emit_json

    if not command.strip():
        raise UsageError('give a command, e.g. annactl policy check "pacman -Rns foo"')
    result = connect(load_settings()).policy_check(command)
    if as_json:
        emit_json(consoles, result.model_dump(mode="json"))
    else:
        _print_check(consoles, result)
    return ExitStatus.SUCCESS


def describe(rule: Rule) -> str:
    """One line saying what a rule matches (``program=pacman argv=-R*``)."""
    parts = [f"{key}={','.join(str(v) for v in values)}" for key, values in (
        ("program", rule.program), ("argv", rule.argv), ("path", rule.path),
        ("scope", rule.scope), ("tier", rule.tier)) if values]
    if rule.path and rule.access != "write":
        parts.append(f"access={rule.access}")
    return " ".join(parts) or "every command"


def _print_view(consoles: Consoles, policy: PolicyView) -> None:
    from rich.table import Table

    from annactl.ui.console import inert, inert_text

    out = consoles.out
    out.print(inert_text(f"administrator file: {policy.admin_file}"))
    if policy.user_file:
        out.print(inert_text(f"your file: {policy.user_file} (may only add restrictions)"))
    if not policy.rules:
        out.print("no rules: every plan needs exactly the confirmations its risk tier asks")
    else:
        table = Table("#", "id", "action", "matches", "from", box=None, show_edge=False)
        for number, rule in enumerate(policy.rules, 1):
            table.add_row(str(number), inert_text(rule.id),
                          inert_text(rule.action, _STYLE[rule.action]),
                          inert_text(describe(rule) + (f"  ({rule.note})" if rule.note
                                                       else ""), max_chars=300),
                          inert_text(rule.source))
        out.print(table)
    for note in policy.notes:
        consoles.err.print(inert_text(f"note: {inert(note)}", "yellow"))


def _print_check(consoles: Consoles, result: PolicyCheckResponse) -> None:
    from annactl.ui.console import inert_text

    out = consoles.out
    decision = result.decision
    out.print(inert_text(f"command:   {result.command}", max_chars=400))
    out.print(inert_text(f"tier:      {result.tier} ({result.scope})"
                         + ("  BANNED: never approvable" if result.banned else "")))
    out.print(inert_text(f"decision:  {decision.action}", _STYLE[decision.action]))
    if decision.rule is not None:
        out.print(inert_text(f"rule:      {decision.rule.id} at {decision.rule.source}: "
                             f"{describe(decision.rule)}", max_chars=400))
    else:
        out.print("rule:      none matched")
    note = decision.note or (decision.rule.note if decision.rule is not None else "")
    if note:
        out.print(inert_text(f"note:      {note}", max_chars=400))
    asks = {0: "no confirmation", 1: "one confirmation", 2: "two confirmations (typed word)"}
    out.print(inert_text("needs:     " + ("nothing: it can never run" if result.banned or
                                          decision.action == "deny" else
                                          asks[result.confirmations])))
