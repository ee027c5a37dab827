"""etckeeper (real, on a scratch tree) and snapper around plans through the real daemon.

etckeeper is used only through ``etckeeper -d DIR`` with ``ETCKEEPER_CONF_DIR`` pointing at
a scratch copy of its configuration: the machine's /etc is never touched. It is found as
``$ANNA_TEST_ETCKEEPER`` (.ci/run extracts the Debian package there without running its
maintainer scripts) or on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from tests.daemonfix import IS_ROOT, make_plan, new_daemon


def _etckeeper() -> tuple[Path, Path] | None:
    """(the etckeeper program, a directory holding its stock configuration)."""
    prefix = os.environ.get("ANNA_TEST_ETCKEEPER")
    if prefix:
        program = Path(prefix) / "usr/bin/etckeeper"
        conf = Path(prefix) / "etc/etckeeper"
    else:
        found = shutil.which("etckeeper")
        program, conf = (Path(found), Path("/etc/etckeeper")) if found else (Path(), Path())
    if program.is_file() and (conf / "commit.d").is_dir() and shutil.which("git"):
        return program, conf
    return None


ETCKEEPER = _etckeeper()


@pytest.mark.skipif(not IS_ROOT, reason="snapshots are taken by the system daemon (root)")
@pytest.mark.skipif(ETCKEEPER is None, reason="etckeeper not available: set "
                    "ANNA_TEST_ETCKEEPER to an extracted etckeeper package (.ci/run does)")
def test_etckeeper_commits_before_and_after_a_plan() -> None:
    assert ETCKEEPER is not None
    program, stock = ETCKEEPER
    daemon = new_daemon(user_mode=False)
    etc, conf = daemon.base / "etc", daemon.base / "etckeeper-conf"
    shutil.copytree(stock, conf)
    etc.mkdir()
    (etc / "app.conf").write_text("a=1\n")
    env = {**os.environ, "ETCKEEPER_CONF_DIR": str(conf), "HOME": str(daemon.home)}
    subprocess.run([str(program), "init", "-d", str(etc)], env=env, check=True,
                   capture_output=True)
    (etc / "pending.conf").write_text("changed by hand before the plan\n")
    daemon.env.update({"ANNAD_SNAPSHOTS": "true", "ANNAD_ETC_ROOT": str(etc),
                       "ANNAD_ETCKEEPER": str(program), "ANNAD_ETCKEEPER_CONF_DIR": str(conf)})
    daemon.start()
    try:
        plan = make_plan([("edit", f"sed -i s/a=1/a=2/ {etc}/app.conf", "MEDIUM")])
        client = daemon.client()
        submitted = client.submit(ActionPlan.model_validate(plan))
        needed = tiers.confirmations_needed(submitted.annotated)
        events = list(client.execute(
            submitted.plan_id, submitted.digest, confirmed=True, high_confirmed=needed == 2,
            confirm_word=tiers.plan_word(submitted.annotated) if needed == 2 else None))
        assert events[-1].status == "succeeded", [e.output for e in events]
        log = subprocess.run(["git", "-C", str(etc), "log", "--format=%H %s"], env=env,
                             check=True, capture_output=True, text=True).stdout.splitlines()
        plan_id = submitted.plan_id
        assert [line.split(" ", 1)[1] for line in log[:2]] == [
            f"anna plan {plan_id}", f"anna plan {plan_id} (before)"]
        record = client.get_plan(plan_id)
        [snap] = record.snapshots
        assert (snap.tool, snap.ok) == ("etckeeper", True)
        assert (snap.post, snap.pre) == (log[0].split()[0], log[1].split()[0])
        changed = subprocess.run(["git", "-C", str(etc), "show", "--stat", "--format=", "HEAD"],
                                 env=env, check=True, capture_output=True, text=True).stdout
        assert "app.conf" in changed and "pending.conf" not in changed
    finally:
        daemon.stop()
        daemon.kill()
        shutil.rmtree(daemon.base, ignore_errors=True)


SNAPPER_PACKAGES = ("snapper", "libsnapper6", "libboost-thread1.74.0", "libbtrfs0", "btrfs-progs",
                    "liblzo2-2")
"""What .ci/run unpacks (never installs: no maintainer scripts) into $ANNA_TEST_SNAPPER."""


_SNAPPER_ENV = os.environ.get("ANNA_TEST_SNAPPER")
"""Read at import: the suite's autouse fixture removes ANNA_* variables from every test."""


def _snapper_prefix() -> Path | None:
    prefix = _SNAPPER_ENV
    if prefix and (Path(prefix) / "usr/bin/snapper").is_file():
        return Path(prefix)
    return None


def _loop_devices_allowed(scratch: Path) -> str | None:
    """Why a loop-mounted image cannot be used here (None: it can)."""
    if shutil.which("losetup") is None:
        return "losetup is not installed"
    image = scratch / "probe.img"
    image.write_bytes(b"\0" * 1024 * 1024)
    probe = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True,
                           text=True, check=False)
    image.unlink()
    if probe.returncode != 0:
        return f"loop devices are not allowed here: {probe.stderr.strip()}"
    subprocess.run(["losetup", "-d", probe.stdout.strip()], check=False)
    return None


def _tool(prefix: Path, name: str, *args: str) -> list[str]:
    for folder in ("usr/bin", "bin", "sbin", "usr/sbin"):
        if (prefix / folder / name).is_file():
            return [str(prefix / folder / name), *args]
    raise FileNotFoundError(name)


def _snapper_volume(prefix: Path, base: Path) -> tuple[Path, Path]:
    """A btrfs image loop-mounted at BASE/vol with a snapper config "root" for it, and a
    wrapper that runs the unpacked snapper on it (``--no-dbus --root``): (mount, wrapper)."""
    libs = f"{prefix}/usr/lib/x86_64-linux-gnu:{prefix}/lib/x86_64-linux-gnu"
    env = {**os.environ, "LD_LIBRARY_PATH": libs}
    image, mount = base / "vol.img", base / "vol"
    with image.open("wb") as handle:
        handle.truncate(300 * 1024 * 1024)
    subprocess.run(_tool(prefix, "mkfs.btrfs", "-q", str(image)), env=env, check=True,
                   capture_output=True)
    mount.mkdir()
    subprocess.run(["mount", "-o", "loop", str(image), str(mount)], check=True,
                   capture_output=True)
    (mount / "etc/snapper/configs").mkdir(parents=True)
    (mount / "etc/default").mkdir(parents=True)
    template = (prefix / "usr/share/snapper/config-templates/default").read_text()
    (mount / "etc/snapper/configs/root").write_text(template)
    (mount / "etc/default/snapper").write_text('SNAPPER_CONFIGS="root"\n')
    subprocess.run(_tool(prefix, "btrfs", "-q", "subvolume", "create",
                         str(mount / ".snapshots")), env=env, check=True, capture_output=True)
    wrapper = base / "snapper"
    wrapper.write_text(f"#!/bin/sh\nLD_LIBRARY_PATH={libs} exec "
                       f"{_tool(prefix, 'snapper')[0]} --no-dbus --root {mount} \"$@\"\n")
    wrapper.chmod(0o755)
    return mount, wrapper


@pytest.mark.skipif(not IS_ROOT, reason="loop devices and the system daemon need root")
def test_snapper_pre_and_post_around_medium_plans_on_a_loop_mounted_btrfs() -> None:
    prefix = _snapper_prefix()
    if prefix is None:
        pytest.skip("snapper not available: set ANNA_TEST_SNAPPER to unpacked "
                    f"{', '.join(SNAPPER_PACKAGES)} (.ci/run does)")
    daemon = new_daemon(user_mode=False)
    why = _loop_devices_allowed(daemon.base)
    if why is not None:
        shutil.rmtree(daemon.base, ignore_errors=True)
        pytest.skip(why)
    mount, wrapper = _snapper_volume(prefix, daemon.base)
    daemon.env.update({"ANNAD_SNAPSHOTS": "true", "ANNAD_SNAPPER": str(wrapper)})
    daemon.start()
    try:
        client = daemon.client()
        medium = make_plan([("write", f"echo data > {mount}/data.txt", "MEDIUM")])
        plan_id = _run(client, medium)
        [snap] = client.get_plan(plan_id).snapshots
        assert (snap.tool, snap.config, snap.pre, snap.post, snap.ok) == (
            "snapper", "root", "1", "2", True)
        assert snap.undo == "snapper -c root undochange 1..2"
        listed = subprocess.run([str(wrapper), "-c", "root", "status", "1..2"],
                                capture_output=True, text=True, check=True).stdout
        assert "/data.txt" in listed
        described = subprocess.run([str(wrapper), "-c", "root", "list"], capture_output=True,
                                   text=True, check=True).stdout
        assert f"anna plan {plan_id}" in described
        low = make_plan([("note", "echo note > ~/low.txt", "LOW")])
        assert client.get_plan(_run(client, low)).snapshots == []  # LOW: no snapper
    finally:
        daemon.stop()
        daemon.kill()
        subprocess.run(["umount", str(mount)], check=False)
        shutil.rmtree(daemon.base, ignore_errors=True)


def _run(client: object, plan: dict) -> str:  # type: ignore[type-arg]
    from annactl.core.daemon_client import DaemonClient

    assert isinstance(client, DaemonClient)
    submitted = client.submit(ActionPlan.model_validate(plan))
    needed = tiers.confirmations_needed(submitted.annotated)
    events = list(client.execute(
        submitted.plan_id, submitted.digest, confirmed=True, high_confirmed=needed == 2,
        confirm_word=tiers.plan_word(submitted.annotated) if needed == 2 else None))
    assert events[-1].status == "succeeded", [e.output for e in events]
    return submitted.plan_id
