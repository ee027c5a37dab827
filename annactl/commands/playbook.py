"""Build the Ansible playbook for a stored plan (``annactl export ID --ansible``).

All plan text and the approval travel as **one** JSON text, the play variable
``anna_export`` (``plan_id``, ``digest``, ``approval``, and ``plan``: the plan's canonical
JSON, whose sha256 is the digest). Tasks read it through ``from_json``. Two reasons:

* Ansible 2.19 re-types a ``!unsafe`` scalar by YAML 1.1 rules whatever its quotes:
  ``!unsafe "true"`` runs as ``True``, ``"017"`` becomes 15, ``"1:20"`` 80, ``"yes"``
  true. A JSON text starts with ``{``, which no YAML type claims, and what ``from_json``
  returns are strings Ansible neither re-types nor templates.
* The digest covers exactly the text the hosts receive.

Two modes:

* ``annad`` (default): every host receives the plan JSON and runs ``annactl fleet run FILE
  --digest D --yes-equivalent``: the host's annad verifies that the plan it parses has the
  approved digest *before* anything of it runs (an edited playbook is refused), then
  re-validates with its own telemetry, snapshots, journals and rolls back by itself.
  Under ``--check`` the host's annad judges the plan (validation, digest, its policy) and
  nothing runs.
* ``shell`` for hosts without Anna: checks are ``changed_when: false`` tasks, steps are
  ``ansible.builtin.shell`` tasks (``executable: /bin/bash``) inside a ``block`` whose
  ``rescue`` runs the plan's rollback commands for the steps that ran, newest first,
  then fails the host. ``creates``/``removes`` come from :mod:`.checkmode`.

Both modes first assert, per host, that the plan text's sha256 is the approved digest.
The only templated strings are the :class:`~.yamlout.Template` constants below, which
never contain plan text (indexes are ints Anna counts).
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
"""An undo failed on the host (``rollback_failed``/``rollback_incomplete``, or an undo result
not ok)."""
VERDICT_UNVERIFIED = "undone without a check"
"""The host's Anna undid what ran, but a live step only by its rollback command, which it
cannot check (``rollback_unverified``, or an ok ``unverified``/``uncaptured`` undo result):
neither "rolled back" nor "rollback failed"."""
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


def export_json(annotated: AnnotatedPlan, *, plan_id: str, approval: ApprovalRecord) -> str:
    """The ``anna_export`` text: the plan's canonical JSON and the approval, as JSON."""
    from anna_common.levels import canonical_json

    plan_text = canonical_json(annotated.plan.model_dump(mode="json")).decode("utf-8")
    return json.dumps({"plan_id": plan_id, "digest": annotated.digest,
                       "approval": approval.as_vars(), "plan": plan_text},
                      ensure_ascii=False, sort_keys=True)


def build(annotated: AnnotatedPlan, *, plan_id: str, approval: ApprovalRecord,
          mode: Mode) -> str:
    """The playbook text."""
    plan = annotated.plan
    goal = plan.goals[0] if plan.goals else plan_id
    play: dict[str, Any] = {
        "name": f"Anna plan {plan_id}: {goal}",
        "hosts": Template("all"),
        "gather_facts": False,
        "vars": {"anna_export": export_json(annotated, plan_id=plan_id, approval=approval),
                 "anna": Template("{{ anna_export | from_json }}"),
                 "anna_plan": Template("{{ anna.plan | from_json }}")},
    }
    tasks = [_VERIFIED]
    if mode == "annad":
        tasks += _annad_tasks(annotated, approval)
    else:
        tasks += _shell_tasks(annotated)
    play["tasks"] = tasks
    header = (f"Exported by annactl from plan {plan_id} (mode {mode}).\n"
              f"Digest {annotated.digest}; approved {approval.risk} by {approval.by} at "
              f"{approval.at}.\nThe plan and the approval are the JSON text anna_export "
              "(tagged !unsafe: Ansible never templates or re-types it).")
    return dump([play], header=header)


APPROVED_TASK = "Anna: the plan is the one approved"
"""Name of the first task: the plan text's sha256 is the approved digest."""
_VERIFIED: dict[str, Any] = {
    "name": APPROVED_TASK,
    "ansible.builtin.assert": {
        "that": [Template("(anna.plan | hash('sha256')) == anna.digest"),
                 Template("anna.digest == anna.approval.plan_digest")],
        "fail_msg": Template("the plan in this playbook is not the one approved (digest "
                             "{{ anna.approval.plan_digest }}): it was edited after the "
                             "export; nothing ran"),
        "quiet": True},
    "check_mode": False,
}


def _host_argv(approval: ApprovalRecord, *, check: bool) -> list[Any]:
    argv: list[Any] = [Template("{{ anna_annactl | default('annactl') }}"), "fleet", "run",
                       Template("{{ anna_plan_file.path }}"), "--digest",
                       Template("{{ anna.approval.plan_digest }}"), "--json"]
    if approval.covers_high:
        argv.append("--allow-high")
    if check:
        argv.append("--check")
    return argv


def _annad_tasks(annotated: AnnotatedPlan, approval: ApprovalRecord) -> list[dict[str, Any]]:
    # the plan file is written and removed even under --check (a private temporary
    # file, Anna's bookkeeping: never counted as a change); under --check the host's Anna
    # only judges the plan, and nothing else runs
    run = [
        {"name": "Anna: a private file for the plan",
         "ansible.builtin.tempfile": {"state": "file", "suffix": ".anna-plan.json"},
         "register": "anna_plan_file", "check_mode": False, "changed_when": False},
        {"name": "Anna: the plan JSON",
         "ansible.builtin.copy": {"content": Template("{{ anna.plan }}"),
                                  "dest": Template("{{ anna_plan_file.path }}"),
                                  "mode": "0600"},
         "check_mode": False, "changed_when": False},
        {"name": JUDGE_TASK,
         "ansible.builtin.command": {"argv": _host_argv(approval, check=True)},
         "register": "anna_judged", "check_mode": False, "changed_when": False,
         "failed_when": False, "when": Template("ansible_check_mode")},
        {"name": JUDGE_FAILED_TASK,
         "ansible.builtin.fail": {"msg": Template(_reasons("anna_judged"))},
         "when": Template(f"ansible_check_mode and not ({_outcome_ok('anna_judged')})")},
        {"name": "Anna: run the plan through this host's annad",
         "ansible.builtin.command": {"argv": _host_argv(approval, check=False)},
         "register": "anna_result", "failed_when": False,
         "changed_when": Template(_outcome_ok("anna_result")),
         "when": Template("not ansible_check_mode")},
        {"name": HOST_FAILED_TASK,
         "ansible.builtin.fail": {"msg": Template(_reasons("anna_result"))},
         "when": Template(f"not ansible_check_mode and not ({_outcome_ok('anna_result')})")},
    ]
    cleanup = [{"name": "Anna: remove the plan file",
                "ansible.builtin.file": {"path": Template("{{ anna_plan_file.path }}"),
                                         "state": "absent"},
                "when": Template("anna_plan_file.path is defined"), "check_mode": False,
                "changed_when": False}]
    return [{"name": "Anna: apply the plan", "block": run, "always": cleanup}]


JUDGE_TASK = "Anna: check mode, so this host's Anna only judges the plan"
"""The ``--check`` task: ``annactl fleet run --check`` (validation, digest, policy)."""
JUDGE_FAILED_TASK = "Anna: this host's Anna would refuse the plan"
"""Fails a host under ``--check`` whose Anna would refuse the plan (its reasons follow)."""


# The host's answer is JSON (``annactl fleet run --json`` prints one document on every
# outcome). Registered results are unsafe in Ansible: nothing in them is templated.
def _outcome(var: str) -> str:
    return f"({var}.stdout | from_json)"


def _is_json(var: str) -> str:
    return f"({var}.stdout | default('') | trim is match('[{{]'))"


def _outcome_ok(var: str) -> str:
    """The host says it ran the plan (``succeeded``) or, under --check, that it would
    (``would_run``), for the approved digest."""
    wanted = "would_run" if var == "anna_judged" else "succeeded"
    return (f"{_is_json(var)} and {_outcome(var)}.status | default('') == '{wanted}' "
            f"and {_outcome(var)}.digest | default('') == anna.approval.plan_digest")


def _reasons(var: str) -> str:
    from anna_common.protocol.records import UNVERIFIED_ACTIONS

    return ("{% if " + _is_json(var) + " %}{% set o = " + _outcome(var) + " %}{% else %}"
            "{% set o = {} %}{% endif %}"
            "{% set r = o.record | default({}) %}"
            "{% set bad = (r.steps | default([]) | selectattr('status', 'equalto', "
            "'undo_failed') | list) + (r.undo | default([]) | rejectattr('ok') | list) %}"
            "{% set unchecked = r.undo | default([]) | selectattr('ok') | selectattr('action', "
            "'in', " + repr(sorted(UNVERIFIED_ACTIONS)) + ") | list %}"
            "Anna on {{ inventory_hostname }}: status {{ o.status | default('no answer') }} "
            "({% if o.status | default('') in ['rollback_failed', 'rollback_incomplete'] or bad %}"
            + VERDICT_FAILED +
            "{% elif o.status | default('') == 'rollback_unverified' or (o.status | default('') "
            "in ['failed', 'rolled_back'] and unchecked) %}" + VERDICT_UNVERIFIED +
            "{% elif o.status | default('') in ['failed', 'rolled_back'] %}" + VERDICT_UNDONE +
            "{% else %}" + VERDICT_NONE + "{% endif %})"
            "{% if o.code is defined %}; {{ o.code }}{% endif %}"
            "{% if o.digest is defined and o.digest != anna.approval.plan_digest %}; the host "
            "computed digest {{ o.digest }}, not {{ anna.approval.plan_digest }}{% endif %}"
            "{% if o.message is defined %}; {{ o.message }}{% endif %}"
            "{% if r.error | default(none) %}; {{ r.error.message | default('') }}{% endif %}"
            "{% for s in r.steps | default([]) if s.exit_code | default(0) not in [0, none] "
            "or s.status | default('') in ['failed', 'undo_failed'] %}"
            "; step {{ s.step_id | default('?') }} {{ s.status | default('') }} (exit "
            "{{ s.exit_code }}): {{ s.output | default('') | truncate(300) }}{% endfor %}"
            "{% for u in r.undo | default([]) if not u.ok | default(true) %}"
            "; undo of {{ u.step_id | default('?') }} failed: {{ u.message | default('') }}"
            "{% endfor %}"
            "{% if not o %}; exit {{ " + var + ".rc | default('?') }}: "
            "{{ " + var + ".stderr | default('') | truncate(500) }}{% endif %}")


def _shell(where: str, index: int) -> dict[str, Any]:
    """The command at ``anna_plan[where][index]``: a string from ``from_json``, which
    Ansible neither re-types nor templates."""
    return {"cmd": Template(f"{{{{ anna_plan.{where}[{index}].command }}}}"),
            "executable": "/bin/bash"}


def _check_task(index: int, check: AnnotatedStep, required: bool) -> dict[str, Any]:
    task: dict[str, Any] = {"name": f"check {check.id}: {check.description}",
                            "ansible.builtin.shell": _shell("necessary_checks", index),
                            "changed_when": False}
    if not required:
        task["failed_when"] = False
    return task


def _step_task(number: int, step: AnnotatedStep) -> dict[str, Any]:
    args = _shell("command_plan", number - 1)
    derived = checkmode.derive(step.command)
    if derived is not None:
        args[derived[0]] = derived[1]
    return {"name": f"step {number} {step.id}: {step.description}",
            "ansible.builtin.shell": args, "register": f"anna_step_{number}"}


def _shell_tasks(annotated: AnnotatedPlan) -> list[dict[str, Any]]:
    required = {c.id: c.required for c in annotated.plan.necessary_checks}
    tasks = [_check_task(i, c, required.get(c.id, False))
             for i, c in enumerate(annotated.checks)]
    steps = [_step_task(n, s) for n, s in enumerate(annotated.steps, start=1)]
    by_id = {r.id: (i, r) for i, r in enumerate(annotated.rollback)}
    undo: list[dict[str, Any]] = []
    for number, step in reversed(list(enumerate(annotated.steps, start=1))):
        found = by_id.get(step.rollback_id or "")
        if found is None:
            continue
        index, back = found
        # "ran" = registered and changed: a step skipped by creates/removes or by
        # --check did nothing, so its undo must not run either
        undo.append({"name": f"undo step {number} {step.id}: {back.description}",
                     "ansible.builtin.shell": _shell("rollback_plan", index),
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
