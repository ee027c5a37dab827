"""Build the Ansible playbook for a stored plan (``annactl export ID --ansible``).

Two modes:

* ``annad`` (default): every host receives the plan JSON and runs it through its own
  Anna (``annactl apply FILE --yes [--allow-high] --json``): the host re-validates with
  its own telemetry, snapshots, journals and rolls back by itself. The task reads the
  JSON result and fails the host unless the plan ``succeeded`` (or the host computed a
  different digest), printing the host's reasons.
* ``shell`` for hosts without Anna: checks are ``changed_when: false`` tasks, steps are
  ``ansible.builtin.shell`` tasks (``executable: /bin/bash``) inside a ``block`` whose
  ``rescue`` runs the plan's rollback commands for the steps that ran, newest first,
  then fails the host. ``creates``/``removes`` come from :mod:`.checkmode`.

The person's approval (tier, the typed word for HIGH, the plan digest) is recorded in
the play's ``vars`` as ``anna_approval``; ``--allow-high`` is passed only when that
approval covered HIGH. All plan text goes through :mod:`.yamlout` (``!unsafe``, one-line
escaped scalars); the only templated strings are the :class:`~.yamlout.Template`
constants below, which never contain plan text (step numbers are ints Anna counts).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from annactl.commands import checkmode
from annactl.commands.yamlout import Template, dump

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan, AnnotatedStep

Mode = Literal["annad", "shell"]
ROLLED_BACK_TASK = "Anna: the plan failed on this host and was rolled back"
"""Name of the last rescue task (``annactl fleet apply`` counts hosts by it)."""
ROLLBACK_FAILED_TASK = "Anna: a rollback command failed on this host"
"""Name of the rescue task that fails when an undo command failed."""
HOST_FAILED_TASK = "Anna: the plan did not succeed on this host"
"""Name of the ``--mode annad`` task that fails a host (its message has the reasons)."""
VERDICT_UNDONE = "rolled back"
"""The host's Anna undid everything that ran (``failed`` or ``rolled_back``, no undo
failed): the verdict in parentheses right after the status, in the failure message."""
VERDICT_FAILED = "rollback failed"
"""An undo failed on the host (``rollback_failed``, or an undo result not ok)."""
VERDICT_NONE = "nothing to roll back"
"""Anything else (refused, invalid on that host, no answer): nothing ran."""


@dataclass(frozen=True)
class ApprovalRecord:
    """What the person approved at export time."""

    risk: str
    """The plan's tier as Anna computed it (INFO … HIGH)."""
    confirmations: int
    """0, 1 or 2 (HIGH: the second is the typed word)."""
    word: str | None
    """The word typed (or given by ``--yes --allow-high``) for HIGH, else None."""
    by: str
    """Who approved (the local user name)."""
    at: str
    """When (UTC, ISO 8601)."""
    digest: str
    """The plan digest the approval is for."""

    @property
    def covers_high(self) -> bool:
        """Whether this approval may be passed on as ``--allow-high``."""
        return self.confirmations >= 2 and self.word is not None

    def as_vars(self) -> dict[str, Any]:
        """The ``anna_approval`` play variable."""
        return {"risk": self.risk, "confirmations": self.confirmations, "word": self.word,
                "approved_by": self.by, "approved_at": self.at, "plan_digest": self.digest}


def build(annotated: AnnotatedPlan, *, plan_id: str, approval: ApprovalRecord,
          mode: Mode) -> str:
    """The playbook text."""
    plan = annotated.plan
    goal = plan.goals[0] if plan.goals else plan_id
    play: dict[str, Any] = {
        "name": f"Anna plan {plan_id}: {goal}",
        "hosts": Template("all"),
        "gather_facts": False,
        "vars": {"anna_plan_id": plan_id, "anna_plan_digest": annotated.digest,
                 "anna_approval": approval.as_vars()},
    }
    if mode == "annad":
        play["vars"]["anna_annactl"] = "annactl"
        play["tasks"] = _annad_tasks(annotated, approval)
    else:
        play["tasks"] = _shell_tasks(annotated)
    header = (f"Exported by annactl from plan {plan_id} (mode {mode}).\n"
              f"Digest {annotated.digest}; approved {approval.risk} by {approval.by} at "
              f"{approval.at}.\nEvery string from the plan is tagged !unsafe: Ansible never "
              "templates it.")
    return dump([play], header=header)


def _annad_tasks(annotated: AnnotatedPlan, approval: ApprovalRecord) -> list[dict[str, Any]]:
    plan_json = json.dumps(annotated.plan.model_dump(mode="json"), ensure_ascii=False,
                           indent=1, sort_keys=True)
    argv: list[Any] = [Template("{{ anna_annactl }}"), "apply",
                       Template("{{ anna_plan_file.path }}"), "--yes", "--json"]
    if approval.covers_high:
        argv.insert(4, "--allow-high")
    # the plan file is written and removed even under --check (a private temporary
    # file, Anna's bookkeeping: never counted as a change); under --check the host's Anna
    # only validates the plan, and nothing else runs
    run = [
        {"name": "Anna: a private file for the plan",
         "ansible.builtin.tempfile": {"state": "file", "suffix": ".anna-plan.json"},
         "register": "anna_plan_file", "check_mode": False, "changed_when": False},
        {"name": "Anna: the plan JSON",
         "ansible.builtin.copy": {"content": plan_json,
                                  "dest": Template("{{ anna_plan_file.path }}"),
                                  "mode": "0600"},
         "check_mode": False, "changed_when": False},
        {"name": "Anna: check mode, so this host's Anna only validates the plan",
         "ansible.builtin.command": {"argv": [Template("{{ anna_annactl }}"), "validate",
                                              Template("{{ anna_plan_file.path }}")]},
         "check_mode": False, "changed_when": False, "when": Template("ansible_check_mode")},
        {"name": "Anna: run the plan through this host's annad",
         "ansible.builtin.command": {"argv": argv},
         "register": "anna_result", "failed_when": False,
         "changed_when": Template(_SUCCEEDED), "when": Template("not ansible_check_mode")},
        {"name": HOST_FAILED_TASK,
         "ansible.builtin.fail": {"msg": Template(_REASONS)},
         "when": Template("not ansible_check_mode and not (" + _SUCCEEDED + ")")},
    ]
    cleanup = [{"name": "Anna: remove the plan file",
                "ansible.builtin.file": {"path": Template("{{ anna_plan_file.path }}"),
                                         "state": "absent"},
                "when": Template("anna_plan_file.path is defined"), "check_mode": False,
                "changed_when": False}]
    return [{"name": "Anna: apply the plan", "block": run, "always": cleanup}]


# The host's answer is JSON (``annactl apply --json`` prints one document on every
# outcome). Registered results are unsafe in Ansible: nothing in them is templated.
_OUTCOME = "(anna_result.stdout | from_json)"
_IS_JSON = "(anna_result.stdout | default('') | trim is match('[{]'))"
_SUCCEEDED = (f"{_IS_JSON} and {_OUTCOME}.status | default('') == 'succeeded' "
              f"and {_OUTCOME}.digest | default('') == anna_plan_digest")
_REASONS = ("{% if " + _IS_JSON + " %}{% set o = " + _OUTCOME + " %}{% else %}"
            "{% set o = {} %}{% endif %}"
            "{% set r = o.record | default({}) %}"
            "{% set bad = (r.steps | default([]) | selectattr('status', 'equalto', "
            "'undo_failed') | list) + (r.undo | default([]) | rejectattr('ok') | list) %}"
            "Anna on {{ inventory_hostname }}: status {{ o.status | default('no answer') }} "
            "({% if o.status | default('') == 'rollback_failed' or bad %}" + VERDICT_FAILED +
            "{% elif o.status | default('') in ['failed', 'rolled_back'] %}" + VERDICT_UNDONE +
            "{% else %}" + VERDICT_NONE + "{% endif %})"
            "{% if o.digest is defined and o.digest != anna_plan_digest %}; the host computed "
            "digest {{ o.digest }}, not {{ anna_plan_digest }}{% endif %}"
            "{% if o.message is defined %}; {{ o.message }}{% endif %}"
            "{% if r.error | default(none) %}; {{ r.error.message | default('') }}{% endif %}"
            "{% for s in r.steps | default([]) if s.exit_code | default(0) not in [0, none] "
            "or s.status | default('') in ['failed', 'undo_failed'] %}"
            "; step {{ s.step_id | default('?') }} {{ s.status | default('') }} (exit "
            "{{ s.exit_code }}): {{ s.output | default('') | truncate(300) }}{% endfor %}"
            "{% for u in r.undo | default([]) if not u.ok | default(true) %}"
            "; undo of {{ u.step_id | default('?') }} failed: {{ u.message | default('') }}"
            "{% endfor %}"
            "{% if not o %}; exit {{ anna_result.rc | default('?') }}: "
            "{{ anna_result.stderr | default('') | truncate(500) }}{% endif %}")


def _shell(command: str) -> dict[str, Any]:
    return {"cmd": command, "executable": "/bin/bash"}


def _check_task(check: AnnotatedStep, required: bool) -> dict[str, Any]:
    task: dict[str, Any] = {"name": f"check {check.id}: {check.description}",
                            "ansible.builtin.shell": _shell(check.command),
                            "changed_when": False}
    if not required:
        task["failed_when"] = False
    return task


def _step_task(number: int, step: AnnotatedStep) -> dict[str, Any]:
    args = _shell(step.command)
    derived = checkmode.derive(step.command)
    if derived is not None:
        args[derived[0]] = derived[1]
    return {"name": f"step {number} {step.id}: {step.description}",
            "ansible.builtin.shell": args, "register": f"anna_step_{number}"}


def _shell_tasks(annotated: AnnotatedPlan) -> list[dict[str, Any]]:
    required = {c.id: c.required for c in annotated.plan.necessary_checks}
    tasks = [_check_task(c, required.get(c.id, False)) for c in annotated.checks]
    steps = [_step_task(n, s) for n, s in enumerate(annotated.steps, start=1)]
    by_id = {r.id: r for r in annotated.rollback}
    undo: list[dict[str, Any]] = []
    for number, step in reversed(list(enumerate(annotated.steps, start=1))):
        back = by_id.get(step.rollback_id or "")
        if back is None:
            continue
        # "ran" = registered and changed: a step skipped by creates/removes or by
        # --check did nothing, so its undo must not run either
        undo.append({"name": f"undo step {number} {step.id}: {back.description}",
                     "ansible.builtin.shell": _shell(back.command),
                     "when": Template(f"anna_step_{number} is defined and "
                                      f"anna_step_{number} is changed"),
                     "register": f"anna_undo_{number}", "ignore_errors": True})
    numbers = [int(str(u["register"]).rsplit("_", 1)[1]) for u in undo]
    failed = " or ".join(f"(anna_undo_{n} | default({{}})) is failed" for n in numbers)
    rescue = [*undo]
    if failed:
        rescue.append({"name": ROLLBACK_FAILED_TASK,
                       "ansible.builtin.fail": {"msg": Template(
                           "a rollback command failed on {{ inventory_hostname }}; "
                           "look at the undo tasks above")},
                       "when": Template(failed)})
    rescue.append({"name": ROLLED_BACK_TASK, "ansible.builtin.fail": {"msg": Template(
        "{{ ansible_failed_task.name | default('a step') }} failed on "
        "{{ inventory_hostname }}: "
        "{{ ansible_failed_result.stderr | default(ansible_failed_result.msg) "
        "| default('') | truncate(500) }}")}})
    if steps:
        tasks.append({"name": "Anna: the plan's steps", "block": steps, "rescue": rescue})
    return tasks
