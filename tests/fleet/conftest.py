"""Fixtures for the fleet tests: a real ansible-playbook whose every directory is in tmp.

``ansible_env`` keeps Ansible's config, temp and collection directories inside the test's
temporary HOME (``ANSIBLE_HOME``, ``ANSIBLE_LOCAL_TEMP``, ``ANSIBLE_REMOTE_TEMP`` …) and
runs modules with this venv's python; ``run_playbook`` runs the real program against
``localhost`` with ``-c local``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def _ansible_playbook() -> str:
    found = shutil.which("ansible-playbook", path=str(BIN)) or shutil.which("ansible-playbook")
    if found is None:
        pytest.skip("ansible-core is not installed (pip install 'anna[fleet]')")
    return found


@dataclass
class Ran:
    """A finished ansible-playbook."""

    rc: int
    out: str
    err: str


@pytest.fixture
def ansible_env(tmp_path: Path, isolated_home: Path) -> dict[str, str]:
    """The environment for ansible-playbook and annactl fleet: everything under tmp."""
    base = tmp_path / "ansible"
    for sub in ("home", "local-tmp", "remote-tmp", "collections"):
        (base / sub).mkdir(parents=True)
    env = dict(os.environ)
    env.update({
        "HOME": str(isolated_home),
        "ANSIBLE_HOME": str(base / "home"),
        "ANSIBLE_LOCAL_TEMP": str(base / "local-tmp"),
        "ANSIBLE_REMOTE_TEMP": str(base / "remote-tmp"),
        "ANSIBLE_COLLECTIONS_PATH": str(base / "collections"),
        "ANSIBLE_CONFIG": str(base / "no-ansible.cfg"),
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_LOCALHOST_WARNING": "0",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        "PATH": f"{BIN}:{env.get('PATH', '/usr/bin:/bin')}",
    })
    return env


@pytest.fixture
def run_playbook(ansible_env: dict[str, str], tmp_path: Path):  # type: ignore[no-untyped-def]
    """``run_playbook(path, *extra)``: the real ansible-playbook on localhost, -c local."""
    program = _ansible_playbook()

    def run(playbook: Path, *extra: str, env: dict[str, str] | None = None) -> Ran:
        proc = subprocess.run(
            [program, "-i", "localhost,", "-c", "local", str(playbook), *extra],
            env={**ansible_env, **(env or {})}, cwd=tmp_path, capture_output=True, text=True,
            timeout=240, check=False)
        return Ran(proc.returncode, proc.stdout, proc.stderr)

    return run
