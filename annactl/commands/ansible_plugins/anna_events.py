"""An Ansible stdout callback that prints one JSON object per event, for ``annactl fleet``.

Ansible loads this file itself (``ANSIBLE_CALLBACK_PLUGINS`` points at this folder and
``ANSIBLE_STDOUT_CALLBACK=anna_events``); annactl never imports it. Every line is a JSON
object with ``event`` (``task``, ``ok``, ``changed``, ``failed``, ``skipped``,
``unreachable``, ``rescued``, ``stats``), the host and the task name; ``failed`` lines
carry a short message. Host output is untrusted: annactl renders it inert.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: anna_events
    type: stdout
    short_description: JSON lines for annactl fleet
    description: One JSON object per task result, and the play recap.
"""

MAX_MESSAGE = 2000
"""Characters of a failure message kept."""


def _text(value: Any) -> str:
    return str(value)[:MAX_MESSAGE] if value is not None else ""


class CallbackModule(CallbackBase):  # type: ignore[misc]
    """Prints events as JSON lines on stdout."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "anna_events"

    def _emit(self, **fields: Any) -> None:
        sys.stdout.write(json.dumps(fields, ensure_ascii=True) + "\n")
        sys.stdout.flush()

    def _result(self, kind: str, result: Any, **extra: Any) -> None:
        data = result._result
        task = result._task
        changed = bool(data.get("changed", False))
        event = "changed" if kind == "ok" and changed else kind
        self._emit(event=event, host=result._host.get_name(),
                   task=_text(task.get_name()), changed=changed, **extra)

    def v2_playbook_on_task_start(self, task: Any, is_conditional: Any) -> None:
        """A task starts (on every host of the play)."""
        self._emit(event="task", task=_text(task.get_name()))

    def v2_runner_on_ok(self, result: Any) -> None:
        """A task succeeded on a host."""
        self._result("ok", result)

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        """A task failed on a host (maybe ignored, maybe rescued later)."""
        data = result._result
        message = data.get("msg") or data.get("stderr") or data.get("stdout") or ""
        self._result("failed", result, ignored=bool(ignore_errors), msg=_text(message))

    def v2_runner_on_skipped(self, result: Any) -> None:
        """A task was skipped on a host."""
        self._result("skipped", result)

    def v2_runner_on_unreachable(self, result: Any) -> None:
        """A host could not be reached."""
        data = result._result
        self._result("unreachable", result, msg=_text(data.get("msg", "")))

    def v2_playbook_on_stats(self, stats: Any) -> None:
        """The recap: counts per host."""
        hosts = sorted(stats.processed.keys())
        self._emit(event="stats", hosts={h: stats.summarize(h) for h in hosts})
