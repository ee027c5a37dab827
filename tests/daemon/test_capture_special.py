"""Special files: a captured step writes into no FIFO outside its overlays and opens no device
node; a FIFO or device node it makes is in the observed change set, and a device is refused.

The probes run through the real capture in the escape driver's private namespaces
(tests/daemon/capture_escape_driver.py with ``"special": true``): a decoy FIFO under its
own /run tmpfs with the driver holding the reading end, a loop device the driver attached
to a scratch image (a block node of it left on a disk, as a program might leave one), and a
character node with /dev/kmsg's numbers, which a probe only ever opens — nothing here writes
to the machine's /run, its disks or its kernel log, even if a wall failed.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from anna_common.levels import RiskLevel
from anna_common.risk.rules.base import AssessContext
from annad.capture.judge import Approval, judge
from annad.capture.layers import Change
from tests.daemon.test_capture_escapes import SPELLINGS, probe, refused
from tests.daemonfix import IS_ROOT

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="the capture and mknod need root")

DENIED = "Permission denied"


def special(tmp_path: Path, command: str) -> dict[str, Any]:
    """``command`` captured with the FIFO and device targets in place."""
    return probe(tmp_path, command, special=True)


@pytest.mark.parametrize("form", SPELLINGS)
def test_a_fifo_under_the_real_run_is_not_written(tmp_path: Path, form: str) -> None:
    report = special(tmp_path, form.format("echo telinit-6 > {FIFO}"))
    refused(report)
    assert report["fifo_got"] == ""
    assert DENIED in report["output"], report


@pytest.mark.parametrize("command", [
    "tee {FIFO} <<< telinit-6",
    "printf telinit-6 | dd of={FIFO} status=none",
    "python3 -c \"open('{FIFO}', 'w').write('telinit-6')\"",
    "exec 3<>{FIFO}; echo telinit-6 >&3",
])
def test_no_program_or_mode_writes_into_the_fifo(tmp_path: Path, command: str) -> None:
    report = special(tmp_path, command)
    refused(report)
    assert report["fifo_got"] == ""


@pytest.mark.parametrize("command", [
    "echo anna > {LOOP}",
    "printf anna | dd of={LOOP} conv=notrunc status=none",
    "python3 -c \"open('{LOOP}', 'r+b').write(b'anna')\"",
])
def test_a_loop_device_node_on_a_disk_is_not_written(tmp_path: Path, command: str) -> None:
    report = special(tmp_path, command)
    refused(report)
    assert not report["loop_written"]
    assert DENIED in report["output"], report


def test_a_kmsg_node_is_not_even_opened(tmp_path: Path) -> None:
    # only the open is tried: if it succeeded, nothing would be written
    report = special(tmp_path, "exec 3>{KMSG}")
    refused(report)
    assert DENIED in report["output"], report


def test_a_fifo_the_step_makes_is_in_the_change_set(tmp_path: Path) -> None:
    report = special(tmp_path, "mkfifo {T}/pipe")
    assert report["exit"] == 0, report
    assert {"path": str(tmp_path / "state" / "scratch" / "pipe"), "kind": "fifo"} in [
        {"path": c["path"], "kind": c["kind"]} for c in report["changes"]]


def test_a_device_node_the_step_moves_is_in_the_change_set(tmp_path: Path) -> None:
    # no mknod (the capability is gone), but a rename copies the node up into the layer
    report = special(tmp_path, "mv {LOOP} {T}/disk")
    kinds = {c["path"]: c["kind"] for c in report["changes"]}
    if report["exit"] != 0:  # the kernel refused the copy-up: nothing to judge
        assert not kinds, report
        return
    assert kinds.get(str(tmp_path / "state" / "scratch" / "disk")) == "device", report


def _approval(tmp_path: Path) -> Approval:
    return Approval(tier=RiskLevel.HIGH, system=True, ctx=AssessContext(home=str(tmp_path)),
                    state_dir=str(tmp_path / "state"))


@pytest.mark.parametrize(("kind", "refusal"), [
    ("device", "device node"), ("fifo", None)])
def test_the_judge_refuses_a_device_node_and_names_a_fifo(tmp_path: Path, kind: str,
                                                          refusal: str | None) -> None:
    change = Change(path=str(tmp_path / "n"), kind=kind, source=str(tmp_path / "n"),  # type: ignore[arg-type]
                    mode=0o600, uid=0, gid=0)
    verdict = judge([change], _approval(tmp_path), 0)
    assert verdict.shown == [f"makes {kind.upper() if kind == 'device' else 'FIFO'} "
                             f"{tmp_path / 'n'} mode 0600 owner 0:0"]
    if refusal is None:
        assert not verdict.refused, verdict
    else:
        assert len(verdict.refused) == 1 and refusal in verdict.refused[0], verdict


# -- Landlock alone, without the nodev and read-only mounts -------------------------------


def _in_domain(tmp_path: Path, attempt: str) -> int:
    """Fork; in the child enter the capture's Landlock domain with ``tmp_path/tree`` a tree,
    ``tmp_path/entries`` an entry-only directory, then ``attempt`` one open; the errno it
    got (0: it opened — and was closed at once, nothing written)."""
    from annad.confine import landlock
    targets = {"kmsg": ("/dev/kmsg", os.O_WRONLY),
               "fifo": (str(tmp_path / "fifo"), os.O_WRONLY | os.O_NONBLOCK),
               "tree": (str(tmp_path / "tree" / "new"), os.O_WRONLY | os.O_CREAT),
               "entry": (str(tmp_path / "entries" / "new"), os.O_WRONLY | os.O_CREAT)}
    path, flags = targets[attempt]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - reports through the pipe
        code = 255
        with contextlib.suppress(BaseException):
            landlock.wall_files((), (str(tmp_path / "tree"),), (str(tmp_path / "entries"),))
            try:
                os.close(os.open(path, flags | os.O_CLOEXEC, 0o600))
                code = 0
            except OSError as exc:
                code = exc.errno or 254
        os.write(write, bytes([code]))
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        got = pipe.read()
    os.waitpid(pid, 0)
    assert len(got) == 1, "the child did not report"
    return got[0]


@pytest.fixture
def domain_dirs(tmp_path: Path) -> Path:
    (tmp_path / "tree").mkdir()
    (tmp_path / "entries").mkdir()
    os.mkfifo(tmp_path / "fifo")
    return tmp_path


@pytest.mark.skipif(not Path("/dev/kmsg").exists() or
                    not stat.S_ISCHR(os.stat("/dev/kmsg").st_mode), reason="no /dev/kmsg")
def test_landlock_alone_refuses_opening_dev_kmsg(domain_dirs: Path) -> None:
    # the machine's /dev is a devtmpfs without nodev: only Landlock stands in the way
    import errno
    assert _in_domain(domain_dirs, "kmsg") == errno.EACCES


def test_landlock_alone_refuses_a_fifo_outside_the_trees(domain_dirs: Path) -> None:
    import errno
    assert _in_domain(domain_dirs, "fifo") == errno.EACCES


def test_a_tree_is_written_and_an_entry_directory_is_not(domain_dirs: Path) -> None:
    import errno
    assert _in_domain(domain_dirs, "tree") == 0
    assert _in_domain(domain_dirs, "entry") == errno.EACCES


def test_the_cost_a_new_file_directly_in_root_cannot_be_written(tmp_path: Path) -> None:
    # the root holds /run, /proc, /sys and /dev: it may only have entries made, so a file
    # made directly in it cannot be opened for writing (docs/security.md names this cost);
    # one level down everything is as before
    report = special(tmp_path / "root", "echo x > /anna-probe-new-file")
    refused(report)
    assert DENIED in report["output"], report
    report = special(tmp_path / "below", "mkdir {T}/new && echo x > {T}/new/file")
    assert report["exit"] == 0, report
