"""A real systemd for the tests in this folder: a container booted once per session.

The container (``tests/systemd/machine.py``) has systemd as PID 1 and Anna installed the
way docs/operations.md says (the units from ``systemd/``, group ``anna``, the socket
directory, ``annad.service`` enabled and started). Two people live in it: ``alice`` in
group ``anna`` and ``bob`` outside it, both with a running user manager.

These tests need root and systemd-nspawn and mmdebstrap (``.ci/run`` installs them from
Debian and builds the cached rootfs); they skip, saying why, only on a machine that cannot
have them (not root, or no apt).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator

import pytest

from tests.daemonfix import shared_user_daemon, user_daemon  # noqa: F401 - fixtures
from tests.systemd.machine import REPO, Container, boot_container, build_cache, missing_tools


def _can_run() -> None:
    if os.geteuid() != 0:
        pytest.skip("the systemd container needs root (systemd-nspawn)")
    missing = missing_tools()
    if missing and shutil.which("apt-get") is None:
        pytest.skip(f"no apt-get to install {', '.join(missing)} (Debian's systemd-container "
                    "and mmdebstrap)")
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run .ci/run, which installs "
                    "systemd-container and mmdebstrap from Debian")


def install_commands() -> list[str]:
    """The commands docs/operations.md gives under "Installing the units"."""
    text = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
    section = text.split("## Installing the units", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, "docs/operations.md lost its install commands"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()
            if line.split("#", 1)[0].strip()]


@pytest.fixture(scope="session")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Container]:
    """The booted container with annad.service running (see the module docstring)."""
    _can_run()
    build_cache()
    container = boot_container(tmp_path_factory.mktemp("systemd"), "sys")
    try:
        # alice may read the system journal (systemd-journal), as an administrator can
        container.add_user("alice", groups=("systemd-journal",))
        container.add_user("bob")
        # the documented install, line by line, from the copied worktree (its systemd/)
        script = "set -eux\ncd /opt/anna-src\n" + "\n".join(install_commands()) + "\n"
        container.write("/opt/anna-units.sh", script)
        container.ok(["sh", "/opt/anna-units.sh"])
        yield container
    finally:
        container.stop()


@pytest.fixture(scope="session")
def failed_unit(machine: Container) -> float:
    """``anna-fails.service``, made to fail; returns the time it failed."""
    machine.write("/etc/systemd/system/anna-fails.service",
                  "[Unit]\nDescription=Anna test unit made to fail\n\n"
                  "[Service]\nType=oneshot\nExecStart=/bin/false\n")
    machine.ok(["systemctl", "daemon-reload"])
    failed = machine.run(["systemctl", "start", "anna-fails.service"])
    assert failed.returncode != 0
    assert machine.run(["systemctl", "is-failed", "anna-fails.service"]).stdout.strip() == \
        "failed"
    return float(machine.ok(["date", "+%s.%N"]).strip())


@pytest.fixture(scope="session")
def probe_unit(machine: Container) -> str:
    """``anna-probe.service``: a long-running system service, installed but not enabled."""
    machine.write("/etc/systemd/system/anna-probe.service",
                  "[Unit]\nDescription=Anna test service\n\n[Service]\n"
                  "ExecStart=/bin/sleep infinity\n\n[Install]\nWantedBy=multi-user.target\n")
    machine.ok(["systemctl", "daemon-reload"])
    return "anna-probe.service"
