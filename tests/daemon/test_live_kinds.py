"""Which steps run live, and what Anna says about undoing them (issue 19, item 4).

- pip and pipx only write files: they are no live kind any more, so a ``pip install`` runs
  captured — its writes observed, judged, backed up and undone byte-exact (a local wheel,
  no network).
- a container with host access changes the host through its runtime's daemon, where no
  capture sees it: HIGH, "runs live; Anna cannot undo it", never a claimed undo (a stand-in
  ``docker`` program plays the runtime; docker itself is not installed and never run).
- a live step whose state Anna records none of says so before it is approved.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import zipfile
from typing import TYPE_CHECKING

import pytest

from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from anna_common.risk.rules.base import RUNS_LIVE, UNVERIFIED_UNDO_WORDS
from annad.execution.livekinds import live_kind, live_only
from tests.daemonfix import make_plan
from tests.treeprint import fingerprint

if TYPE_CHECKING:
    from pathlib import Path

    from annactl.core.daemon_client import DaemonClient
    from tests.daemonfix import RunningDaemon

FILE_ONLY = [
    "pip install x", "sudo pip install x", "env pip install x", "/usr/bin/pip3 install x",
    "pip3.11 install x", "python3 -m pip install x", "pip install --user x", "pipx install x",
    "sudo -H pip install x", "npm -g install x", "cargo install x", "gem install x",
]
"""Package installers whose effects are files only: captured like any file step."""

CONTAINERS = [
    "docker run alpine true", "sudo docker run alpine true", "podman run alpine true",
    "docker container run alpine true", "nerdctl run alpine true", "docker-compose up -d",
    "env docker run alpine true", "/usr/bin/docker run alpine true",
]
"""Container runtimes: they act through a daemon's socket, which a capture refuses."""

HOST_ACCESS = [
    "docker run --rm -v /:/host alpine true", "docker run --volume=/etc:/x alpine true",
    "docker run -v/etc:/x alpine true", "docker run -itv /etc:/x alpine true",
    "docker run --mount type=bind,src=/etc,dst=/x alpine true",
    "docker run --mount=type=bind,source=/etc,target=/x alpine true",
    "docker run --mount type=volume,src=v,dst=/x,volume-opt=device=/etc,volume-opt=o=bind a",
    "docker volume create --opt type=none --opt device=/etc --opt o=bind v",
    "sudo docker run -v /etc:/x alpine true", "podman run -v /etc:/x alpine true",
    "docker container run -v /etc:/x alpine true", "nerdctl run -v /etc:/x alpine true",
    "docker run --privileged alpine true", "docker run --pid=host alpine true",
    "docker run --pid host alpine true", "docker run --network host alpine true",
    "docker run -v ~/:/x alpine true", "docker run -v \"$HOME\":/x alpine true",
    "docker run -v ./data:/x alpine true", "docker run -v //etc:/x alpine true",
    "docker run -v /e?c:/x alpine true", "docker run -v=/etc:/x alpine true",
    "docker run --cap-add=SYS_ADMIN alpine true", "docker run --device /dev/sda alpine true",
    "docker run --volumes-from c alpine true", "docker compose up -d",
    "docker-compose up -d", "podman kube play pod.yaml",
]
"""A container given the host, spelled as docker's and podman's own parsers accept it."""

NO_HOST = ["docker run --rm alpine true", "docker run -v data:/x alpine true",
           "podman run --mount type=volume,src=data,dst=/x alpine true"]
"""No host path, namespace or privilege: live, but not "cannot undo"."""


@pytest.mark.parametrize("command", FILE_ONLY)
def test_a_package_installer_that_only_writes_files_runs_captured(command: str) -> None:
    assert live_kind(command) is None, command


@pytest.mark.parametrize("command", CONTAINERS)
def test_a_container_runtime_runs_live(command: str) -> None:
    assert live_kind(command) is not None and live_only(command) is not None, command


def _submit(client: DaemonClient, command: str, rollback: str | None = None) -> object:
    plan = make_plan([("s", command, "LOW")], rollback={"s": rollback} if rollback else None)
    return client.submit(ActionPlan.model_validate(plan), request="containers")


@pytest.mark.shared_daemon
def test_the_daemon_judges_host_access_as_live_and_not_undoable(
        user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    for command in HOST_ACCESS:
        step = _submit(client, command).annotated.steps[0]  # type: ignore[attr-defined]
        assert step.final_risk == "HIGH", (command, step.reasons)
        assert any(RUNS_LIVE in r for r in step.reasons), (command, step.reasons)
        assert "uncaptured_write" in step.codes, command
    for command in NO_HOST:
        step = _submit(client, command).annotated.steps[0]  # type: ignore[attr-defined]
        assert not any(RUNS_LIVE in r for r in step.reasons), (command, step.reasons)
        assert any(r.startswith(UNVERIFIED_UNDO_WORDS) for r in step.reasons), step.reasons
        assert "unverified_undo" in step.codes


@pytest.mark.shared_daemon
def test_a_live_step_says_its_undo_is_unverified_before_approval(
        user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    with_undo = _submit(client, "kill -CONT $$", "kill -CONT $$").annotated.steps[0]  # type: ignore[attr-defined]
    assert any("nothing checks what that leaves" in r for r in with_undo.reasons)
    bare = _submit(client, "kill -CONT $$").annotated.steps[0]  # type: ignore[attr-defined]
    assert any("nothing undoes it" in r for r in bare.reasons), bare.reasons
    typed = _submit(client, "kill -0 $$").annotated.steps[0]  # type: ignore[attr-defined]
    assert "unverified_undo" not in typed.codes


@pytest.mark.shared_daemon
def test_the_plan_summary_never_calls_an_unchecked_undo_available(
        user_daemon: RunningDaemon) -> None:
    """The summary line (``Rollback: …``) follows the steps: an undo nothing checks is
    ``unverified``, a live step nothing undoes is ``none``, and a file step the daemon
    captures keeps ``available``."""
    from annactl.ui.render_plan import summary_line

    client = user_daemon.client()
    cases = {("kill -CONT $$", "kill -CONT $$"): "unverified", ("kill -CONT $$", None): "none",
             ("sudo kill -s CONT $$", "kill -CONT $$"): "unverified"}
    for (command, rollback), status in cases.items():
        annotated = _submit(client, command, rollback).annotated  # type: ignore[attr-defined]
        assert annotated.rollback_status == status, (command, rollback, annotated.steps[0])
        assert f"Rollback: {status}" in summary_line(annotated).plain
    touch = _submit(client, f"touch {user_daemon.base}/made").annotated  # type: ignore[attr-defined]
    assert touch.rollback_status == "available", touch.steps[0].reasons


def _runtime(base: Path) -> Path:
    """A stand-in ``docker``: it changes a file in the test's tree, as a container with a
    bind mount would, from outside anything Anna captures."""
    program = base / "bin" / "docker"
    program.parent.mkdir(exist_ok=True)
    program.write_text(f"#!/bin/sh\necho by-the-container >> {base}/bound/file\n")
    program.chmod(0o755)
    (base / "bound").mkdir(exist_ok=True)
    (base / "bound" / "file").write_text("before\n")
    return program


def _run_and_roll_back(client: DaemonClient, command: str, rollback: str | None
                       ) -> tuple[str, object]:
    response = _submit(client, command, rollback)
    annotated = response.annotated  # type: ignore[attr-defined]
    events = list(client.execute(response.plan_id, response.digest,  # type: ignore[attr-defined]
                                 confirmed=True, high_confirmed=True,
                                 confirm_word=tiers.plan_word(annotated)))
    assert events[-1].status == "succeeded", [(e.type, e.message) for e in events]
    result = client.rollback(response.plan_id,  # type: ignore[attr-defined]
                             confirm_word=tiers.rollback_word(annotated))
    return str(result.status), result


def test_a_container_with_host_access_is_never_reported_undone(
        system_daemon: RunningDaemon) -> None:
    """A root daemon (containers are system steps); the stand-in writes only in its tree."""
    docker = _runtime(system_daemon.base)
    command = f"{docker} run -v {system_daemon.base}/bound:/x alpine true"
    status, result = _run_and_roll_back(system_daemon.client(), command, None)
    assert status == "rollback_failed", result
    status, result = _run_and_roll_back(system_daemon.client(), command, f"{docker} rm c")
    assert status == "rollback_unverified", result
    (uncaptured,) = [u for u in result.undo if u.action == "uncaptured"]  # type: ignore[attr-defined]
    assert uncaptured.ok and "relied on the plan's rollback command" in uncaptured.message


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _wheel(directory: Path) -> Path:
    """A one-module wheel, built by hand (no build tools, no network)."""
    files = {"annaprobe/__init__.py": b"VALUE = 1\n",
             "annaprobe-1.0.dist-info/METADATA":
                 b"Metadata-Version: 2.1\nName: annaprobe\nVersion: 1.0\n",
             "annaprobe-1.0.dist-info/WHEEL":
                 b"Wheel-Version: 1.0\nGenerator: anna-test\nRoot-Is-Purelib: true\n"
                 b"Tag: py3-none-any\n"}
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()]
    record.append("annaprobe-1.0.dist-info/RECORD,,")
    wheel = directory / "annaprobe-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("annaprobe-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return wheel


@pytest.mark.skipif(shutil.which("pip") is None, reason="pip is not installed")
def test_a_pip_install_is_captured_and_undone_byte_exact(user_daemon: RunningDaemon) -> None:
    wheel = _wheel(user_daemon.base)
    site = user_daemon.home / "site"
    site.mkdir()
    (site / "keep").write_text("was here\n")
    before = fingerprint(user_daemon.home)
    command = f"pip install -q --no-index --no-deps --target ~/site {wheel}"
    status, result = _run_and_roll_back(user_daemon.client(), command, None)
    record = user_daemon.client().get_plan(result.plan_id)  # type: ignore[attr-defined]
    assert status == "rolled_back", result
    undone = {u.target for u in result.undo if u.ok}  # type: ignore[attr-defined]
    # observed, not predicted: the package's own directory, which no rule names
    assert str(site / "annaprobe") in undone, result
    assert not (site / "annaprobe").exists()
    assert fingerprint(user_daemon.home) == before
    assert record.steps[0].status == "undone"


UNTYPED = [
    ("ip -n other addr add 10.0.0.1/24 dev lo", ["ip"]), ("sudo ip neigh flush all", ["ip"]),
    ("nmcli connection up x", ["nmcli"]), ("kill -HUP 1", ["kill"]),
    ("hyprctl keyword general:gaps_in 4", ["hyprctl"]),
    # needs no undo: reloaded again after the undo put the unit files back (issue 35)
    ("systemctl daemon-reload", []), ("systemctl isolate rescue.target", ["systemctl"]),
    ("sysctl -p /etc/sysctl.d/x.conf", ["sysctl"]), ("sysctl --system", ["sysctl"]),
    ("sysctl --load=/tmp/x", ["sysctl"]), ("sysctl -w \"$K=1\"", ["sysctl"]),
    ("gsettings reset-recursively org.gnome.desktop.background", ["gsettings"]),
    ("gsettings set \"$S\" picture-uri x", ["gsettings"]),
    ("bash -c 'nmcli radio wifi off'", ["nmcli"]), ("docker run alpine true", ["docker"]),
    # typed or changing nothing: none
    ("ip addr show", []), ("nmcli device status", []), ("kill -0 $$", []),
    ("ip addr add 10.0.0.1/24 dev lo", []), ("sudo ip link set lo up", []),
    ("kill -s 0 $$", []), ("kill --signal=0 $$", []), ("kill -n 0 $$", []),
    ("sysctl -w net.ipv4.ip_forward=1", []), ("sudo sysctl net.ipv4.ip_forward=1", []),
    ("env GSETTINGS_BACKEND=keyfile gsettings set a.b c 'd'", []),
    ("gsettings --schemadir /tmp/s reset a.b c", []), ("systemctl restart sshd", []),
    ("pacman -S htop", []), ("sysctl net.ipv4.ip_forward", []),
]
"""Live programs with no typed pre-state (their undo is unverified), spelled through sudo,
env, bash -c, a variable; and those Anna records or that change nothing."""


@pytest.mark.parametrize(("command", "programs"), UNTYPED)
def test_which_live_programs_have_no_typed_pre_state(command: str, programs: list[str]
                                                     ) -> None:
    from annad.execution.prestate import untyped_live

    assert untyped_live(command) == programs, command
