"""Fixtures for the fleet tests: a real ansible-playbook whose every directory is in tmp.

``ansible_env`` keeps Ansible's config, temp and collection directories inside the test's
temporary HOME (``ANSIBLE_HOME``, ``ANSIBLE_LOCAL_TEMP``, ``ANSIBLE_REMOTE_TEMP`` …) and
runs modules with this venv's python; ``run_playbook`` runs the real program against
``localhost`` with ``-c local``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from anna_common.plan import ActionPlan
from tests.daemonfix import RunningDaemon, running_daemon

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


ANNACTL = str(Path(sys.executable).parent / "annactl")


@dataclass
class Site:
    """A daemon, a scratch directory and the environment annactl and Ansible run in."""

    daemon: RunningDaemon
    env: dict[str, str]
    work: Path
    tmp: Path

    def store(self, data: dict[str, Any]) -> str:
        """Submit a plan (stored, not run); its id."""
        client = self.daemon.client()
        try:
            return client.submit(ActionPlan.model_validate(data), source="file").plan_id
        finally:
            client.close()

    def annactl(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "annactl.cli", *args], env=self.env,
                              capture_output=True, text=True, timeout=240, check=False,
                              cwd=self.tmp)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def record(self, plan_id: str) -> dict[str, Any]:
        client = self.daemon.client()
        try:
            return client.get_plan(plan_id).model_dump(mode="json")
        finally:
            client.close()

    def plans(self) -> list[dict[str, Any]]:
        client = self.daemon.client()
        try:
            return client.list_plans().model_dump(mode="json")["plans"]
        finally:
            client.close()


@pytest.fixture
def site(ansible_env: dict[str, str], tmp_path: Path) -> Iterator[Site]:
    with running_daemon(user_mode=True) as daemon:
        work = daemon.base / "work"
        work.mkdir()
        env = {**ansible_env, "ANNA_SOCKET": str(daemon.socket), "ANNA_AUTOSTART": "false",
               "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        yield Site(daemon, env, work, tmp_path)


def fleet_json(site: Site, plan_id: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    """``annactl fleet apply ID --yes --json`` on this machine as the one host."""
    inventory = site.tmp / "hosts.ini"
    # what an administrator writes for this machine: no SSH to itself
    inventory.write_text("localhost ansible_connection=local\n")
    proc = site.annactl("fleet", "apply", plan_id, "-i", str(inventory), "--yes",
                        "--annactl", ANNACTL, "--json", *extra)
    return proc.returncode, json.loads(proc.stdout), proc.stderr
