"""annactl's command groups: ``policy``, ``fleet``, ``queue`` and ``recipe`` (Typer).

:mod:`annactl.app` adds them to the main command; their bodies live in
``annactl/commands/``, imported only when a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from annactl.app_options import (
    AllowHighOpt,
    IdArg,
    JsonOpt,
    ModeOpt,
    YesOpt,
    consoles,
    group_help,
)

policy_app = typer.Typer(help="The policy the daemon enforces.")


@policy_app.callback(invoke_without_command=True)
def _policy(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Named alone: the group's help (exit 0), or with ``--json`` as one document."""
    group_help(ctx, as_json=as_json)


@policy_app.command("show")
def policy_show(as_json: JsonOpt = False) -> None:
    """The administrator's and your rules, in the order they are evaluated."""
    from annactl.commands import policy as policy_cmd

    raise typer.Exit(policy_cmd.show(consoles(), as_json=as_json))


@policy_app.command("check")
def policy_check(command: Annotated[str, typer.Argument(help="The shell command.")],
                 as_json: JsonOpt = False) -> None:
    """What the policy decides for COMMAND as a plan step: decision, matched rule, tier."""
    from annactl.commands import policy as policy_cmd

    raise typer.Exit(policy_cmd.check(consoles(), command, as_json=as_json))




fleet_app = typer.Typer(help="Apply a plan on many machines (Ansible).")


@fleet_app.callback(invoke_without_command=True)
def _fleet(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Named alone: the group's help (exit 0), or with ``--json`` as one document."""
    group_help(ctx, as_json=as_json)


@fleet_app.command("apply")
def fleet_apply(
    plan_id: Annotated[str, typer.Argument(metavar="ID", help="A stored plan id.")],
    inventory: Annotated[str, typer.Option("--inventory", "-i", help="Ansible inventory.")],
    limit: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--limit", "-l", help="Only these hosts (Ansible pattern).")] = None,
    mode: ModeOpt = "annad",
    check: Annotated[bool, typer.Option("--check", help="Ansible check mode: change nothing."
                                        )] = False,
    yes: YesOpt = False,
    allow_high: AllowHighOpt = False,
    annactl_path: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--annactl", help="annactl on the hosts (--mode annad; default: annactl).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Approve once, run the plan on every host of the inventory, summarise per host."""
    from annactl.commands import fleet

    raise typer.Exit(fleet.apply(consoles(), plan_id, inventory=inventory, limit=limit,
                                 mode=mode, check=check, yes=yes, allow_high=allow_high,
                                 annactl_path=annactl_path, as_json=as_json))


@fleet_app.command("run")
def fleet_run(
    source: Annotated[str, typer.Argument(metavar="FILE", help="The plan JSON (- for stdin).")],
    digest: Annotated[str, typer.Option(
        "--digest", help="The digest the person approved: this host's annad refuses any "
                         "other plan before running anything.")],
    allow_high: AllowHighOpt = False,
    check: Annotated[bool, typer.Option(
        "--check", help="Only ask this host's annad to judge the plan; run nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """A fleet host's side (the exported playbook runs it): verify, then run the plan."""
    from annactl.commands import fleet_host

    raise typer.Exit(fleet_host.run(consoles(), source, digest=digest, allow_high=allow_high,
                                    check=check, as_json=as_json))


# ---------------------------------------------------------------------- recipes and the queue

queue_app = typer.Typer(help="Plans waiting for your approval (from unattended recipes).")


@queue_app.callback(invoke_without_command=True)
def queue_list(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List the waiting plans (approve, show or dismiss each)."""
    if ctx.invoked_subcommand is not None:
        return
    from annactl.commands import queue

    raise typer.Exit(queue.list_queue(consoles(), as_json=as_json))


@queue_app.command("approve")
def queue_approve(plan_id: IdArg, yes: YesOpt = False, allow_high: AllowHighOpt = False,
                  as_json: JsonOpt = False) -> None:
    """Show, confirm by its risk and run a waiting plan."""
    from annactl.commands import ask as cmd_ask
    from annactl.commands import queue

    opts = cmd_ask.RunOptions(yes=yes, allow_high=allow_high, as_json=as_json)
    raise typer.Exit(queue.approve(consoles(), plan_id, opts))


@queue_app.command("show")
def queue_show(plan_id: IdArg, as_json: JsonOpt = False) -> None:
    """Show a waiting plan (its id, or an unambiguous start or end of it)."""
    from annactl.commands import queue

    raise typer.Exit(queue.show(consoles(), plan_id, as_json=as_json))


@queue_app.command("dismiss")
def queue_dismiss(plan_id: IdArg, as_json: JsonOpt = False) -> None:
    """Drop a waiting plan (it stays in history; it never runs from the queue)."""
    from annactl.commands import queue

    raise typer.Exit(queue.dismiss(consoles(), plan_id, as_json=as_json))


recipe_app = typer.Typer(help="Unattended recipes (/etc/anna/recipes.d).")


@recipe_app.callback(invoke_without_command=True)
def _recipe(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Named alone: the group's help (exit 0), or with ``--json`` as one document."""
    group_help(ctx, as_json=as_json)


@recipe_app.command("run")
def recipe_run(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The recipe (file name).")],
    param: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--param", "-p", help="KEY=VALUE for a declared parameter.")] = None,
    trigger: Annotated[str, typer.Option("--trigger", help="manual or timer.")] = "manual",
    as_json: JsonOpt = False,
) -> None:
    """Run a recipe in the daemon: INFO/LOW runs, anything else waits in the queue."""
    from annactl.commands import queue

    raise typer.Exit(queue.run_recipe(consoles(), name, params=list(param or []),
                                      trigger=trigger, as_json=as_json))


audit_app = typer.Typer(help="The daemon's hash-chained journal.")


@audit_app.callback(invoke_without_command=True)
def _audit(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Named alone: the group's help (exit 0), or with ``--json`` as one document."""
    group_help(ctx, as_json=as_json)


@audit_app.command("verify")
def audit_verify(as_json: JsonOpt = False) -> None:
    """Recompute the journal's hash chain; exit 13 when a row was altered or removed."""
    from annactl.commands import audit as audit_cmd

    raise typer.Exit(audit_cmd.verify(consoles(), as_json=as_json))


# ---------------------------------------------------------------------- fleet (issue 13)

def export(
    plan_id: Annotated[str, typer.Argument(metavar="ID", help="A stored plan id.")],
    ansible: Annotated[bool, typer.Option("--ansible", help="Export as an Ansible playbook.")
                       ] = False,
    output: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--output", "-o", help="Write to this file (default: stdout).")] = None,
    mode: ModeOpt = "annad",
    yes: YesOpt = False,
    allow_high: AllowHighOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Export a stored plan as an Ansible playbook, with your approval recorded in it
    (--json: one document with the approval and the playbook's text; approve with --yes)."""
    from annactl.commands import export as export_cmd

    raise typer.Exit(export_cmd.export(consoles(), plan_id, ansible=ansible, output=output,
                                       mode=mode, yes=yes, allow_high=allow_high,
                                       as_json=as_json))
