"""Run ``ansible-playbook`` for ``annactl fleet apply`` and read its events.

The one place the client starts Ansible. The playbook runs with Anna's own stdout
callback (``ansible_plugins/anna_events.py``), so what comes back is one JSON object per
line, never Ansible's human text parsed by hand. Everything else (inventory, SSH,
ansible.cfg, become) is the person's own Ansible setup: Anna adds only the callback.
Host output is untrusted text; callers render it inert.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anna_common.errors import UsageError

PLUGINS = Path(__file__).resolve().parent / "ansible_plugins"
"""Where the ``anna_events`` callback lives."""
MAX_LINE = 1 << 20
"""Longest event line read (a longer one is reported as garbage, not parsed)."""


@dataclass
class Invocation:
    """One ansible-playbook run."""

    playbook: Path
    inventory: str
    limit: str | None = None
    check: bool = False
    extra_vars: dict[str, str] = field(default_factory=dict)

    def argv(self, program: str) -> list[str]:
        """The command line (no shell)."""
        argv = [program, "-i", self.inventory, str(self.playbook)]
        if self.limit:
            argv += ["--limit", self.limit]
        if self.check:
            argv.append("--check")
        for key, value in self.extra_vars.items():
            # a JSON object: Ansible reads the value as data, never as key=value text
            argv += ["-e", json.dumps({key: value})]
        return argv


def find_program() -> str:
    """ansible-playbook beside this Python (the ``anna[fleet]`` extra) or on PATH."""
    here = Path(sys.executable).parent / "ansible-playbook"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    found = shutil.which("ansible-playbook")
    if found is None:
        raise UsageError("ansible-playbook is not installed",
                         hint="pip install 'anna[fleet]' (or your distribution's ansible-core)")
    return found


def events(invocation: Invocation, *, program: str | None = None) -> Iterator[dict[str, Any]]:
    """Run the playbook; yield each event; last, ``{"event": "exit", "rc": N}``.

    Lines that are not JSON objects (a plugin's warning printed to stdout) are yielded as
    ``{"event": "text", "text": …}``; stderr is collected and sent with ``exit``.
    """
    env = {**os.environ, "ANSIBLE_STDOUT_CALLBACK": "anna_events",
           "ANSIBLE_CALLBACK_PLUGINS": _plugin_path(), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_RETRY_FILES_ENABLED": "0"}
    # stderr goes to a file: a full pipe nobody reads would stall ansible-playbook
    with tempfile.TemporaryFile() as err_file:
        try:
            proc = subprocess.Popen(invocation.argv(program or find_program()), env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=err_file)
        except OSError as exc:
            raise UsageError(f"cannot start ansible-playbook: {exc.strerror or exc}") from None
        stdout = proc.stdout
        assert stdout is not None
        with proc:
            for raw in iter(lambda: stdout.readline(MAX_LINE), b""):
                yield _parse(raw)
            rc = proc.wait()
        err_file.seek(0)
        err = err_file.read(MAX_LINE).decode("utf-8", "replace")
    yield {"event": "exit", "rc": rc, "stderr": err}


def _plugin_path() -> str:
    mine = str(PLUGINS)
    theirs = os.environ.get("ANSIBLE_CALLBACK_PLUGINS")
    return f"{mine}:{theirs}" if theirs else mine


def _parse(raw: bytes) -> dict[str, Any]:
    text = raw.decode("utf-8", "replace").strip()
    try:
        value = json.loads(text)
    except ValueError:
        return {"event": "text", "text": text}
    return value if isinstance(value, dict) and isinstance(value.get("event"), str) else \
        {"event": "text", "text": text}
