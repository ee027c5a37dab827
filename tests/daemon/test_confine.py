"""The runner's confinement, run directly (no classifier in front): hostile commands change nothing.

Every command here is one a misjudged check could run. The owner is ``nobody`` (65534) with a
home it owns, so every write below would succeed *without* the confinement (the home, /tmp,
/var/tmp, /dev/shm are writable by nobody) and the failure must be the read-only mount
(``Read-only file system``), not a permission error. Capless-root runs write only into a
root-owned temporary directory, never the real /etc.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from annad.confine.credentials import Identity
from annad.confine.runner import RunResult, run_confined
from annad.confine.spec import RunLimits, needs_root_read

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces as root")
NOBODY = 65534
REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[Identity]:
    """``nobody`` with a home of its own (writable by it, so only confinement stops writes)."""
    home = Path(f"/tmp/anna-confine-{secrets.token_hex(4)}")
    home.mkdir(mode=0o755)
    os.chown(home, NOBODY, NOBODY)
    try:
        yield Identity(uid=NOBODY, gid=NOBODY, groups=(NOBODY,), home=str(home), user="nobody")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _run(command: str, who: Identity, **kwargs: object) -> RunResult:
    result = run_confined(command, who, timeout=30, **kwargs)  # type: ignore[arg-type]
    assert result.error is None, result.error
    return result


WRITABLE_BY_NOBODY = ("/tmp", "/var/tmp", "/dev/shm")


def test_writes_fail_everywhere(owner: Identity) -> None:
    token = secrets.token_hex(6)
    places = ["/", "/etc", *WRITABLE_BY_NOBODY, owner.home]
    script = "; ".join(f"touch {p.rstrip('/')}/anna-probe-{token}" for p in places)
    script += f"; mkdir {owner.home}/d-{token}; echo x > {owner.home}/r-{token}"
    script += f"; ln -s /etc/passwd {owner.home}/l-{token}; mkfifo /tmp/f-{token}"
    result = _run(script, owner)
    assert result.output.count("Read-only file system") == len(places) + 4, result.output
    for place in [*places, owner.home]:
        assert not list(Path(place).glob(f"*{token}")), place
    assert not list(Path(owner.home).iterdir())


def test_whole_tree_is_read_only_in_mountinfo(owner: Identity) -> None:
    result = _run("cat /proc/self/mountinfo", owner)
    lines = [line.split() for line in result.output.splitlines()]
    assert len(lines) > 3
    for fields in lines:
        mount_point, options = fields[4], fields[5].split(",")
        assert "ro" in options, f"{mount_point} is writable: {fields}"
        if mount_point not in ("/dev/" + n for n in ("null", "zero", "full", "random",
                                                        "urandom", "tty")):
            assert "nodev" in options or mount_point == "/dev", fields


def test_scratch_is_the_only_writable_place_and_is_thrown_away(owner: Identity) -> None:
    result = _run(f"echo kept > {owner.home}/x && cat {owner.home}/x; "
                  "awk '$6 ~ /^rw/' /proc/self/mountinfo | wc -l; touch /etc/nope", owner,
                  scratch=(owner.home,))
    assert result.output.splitlines()[:2] == ["kept", "1"]
    assert "Read-only file system" in result.output
    assert not (Path(owner.home) / "x").exists()
    # the next run with the same scratch starts empty (its helper is not the one reused)
    again = _run(f"ls -A {owner.home} | wc -l", owner, scratch=(owner.home,))
    assert again.output == "0\n"


def test_devices_are_not_reachable(owner: Identity) -> None:
    result = _run("ls /dev; dd if=/dev/zero of=/dev/sda count=1; echo x > /dev/mem; "
                  "echo x > /dev/null && echo null-ok; head -c4 /dev/urandom | wc -c", owner)
    listed = set(result.output.split("\n", 12)[:12])
    assert {"null", "zero", "full", "random", "urandom", "tty"} <= listed
    assert "sda" not in result.output.split() and "mem" not in listed
    assert "null-ok" in result.output and result.output.rstrip().endswith("4")
    assert result.output.count("Read-only file system") == 2  # no node can be created


def test_identity_capabilities_and_no_new_privs(owner: Identity) -> None:
    result = _run("id -u; id -g; sudo id -u; sudo -n -E id -u; grep -E '^(Cap|NoNewPrivs)' "
                  "/proc/self/status", owner)
    lines = result.output.splitlines()
    assert lines[:4] == [str(NOBODY)] * 4
    status = dict(line.split(":\t") for line in lines[4:])
    assert status["NoNewPrivs"] == "1"
    for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(status[key], 16) == 0, (key, status[key])


def test_capless_root_read(tmp_path: Path, owner: Identity) -> None:
    """uid 0 for a root-only read, but no capability, read-only, and /run hidden."""
    secret = tmp_path / "root-only"
    secret.write_text("for root\n")
    secret.chmod(0o600)
    target = tmp_path / "root-dir"
    target.mkdir()  # root-owned 0755: uid 0 could write here without the confinement
    result = _run(f"id -u; cat {secret}; echo $HOME; ls -A /run | wc -l; "
                  f"touch {target}/x; grep -E '^Cap(Eff|Bnd)' /proc/self/status; "
                  "cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness", owner, root_read=True)
    lines = result.output.splitlines()
    assert lines[:4] == ["0", "for root", owner.home, "0"]
    assert "CapEff:\t0000000000000000" in lines and "CapBnd:\t0000000000000000" in lines
    assert result.output.count("Read-only file system") == 2
    assert not (target / "x").exists()


def test_network_is_unreachable(owner: Identity) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"anna-confine-{secrets.token_hex(4)}"
    abstract.bind("\0" + name)
    abstract.listen(1)
    try:
        code = ("import socket,sys\n"
                f"s=socket.socket(socket.AF_UNIX);s.connect('\\0{name}')")
        result = _run(f"echo hi > /dev/tcp/127.0.0.1/{port} || echo tcp-failed; "
                      f"python3 -c \"{code}\" 2>&1 | tail -1; ip -o link 2>/dev/null | wc -l",
                      owner)
        assert "tcp-failed" in result.output
        # the machine's network namespace (ip sees its links), but no inet or Unix socket
        assert "Address family not supported" in result.output
        assert "PermissionError" in result.output
        host_links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True,
                                    check=False).stdout.count("\n")
        assert result.output.splitlines()[-1] == str(host_links)
        listener.setblocking(False)
        abstract.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
        with pytest.raises(BlockingIOError):
            abstract.accept()
    finally:
        listener.close()
        abstract.close()


def test_kill_cannot_reach_host_processes(owner: Identity) -> None:
    """The machine's processes are seen (same PID namespace) but no signal reaches them:
    Landlock scopes signals to the run, for the owner's uid and for capless root alike."""
    sleeper = subprocess.Popen(["sleep", "300"], user=NOBODY, group=NOBODY, extra_groups=[])
    root_sleeper = subprocess.Popen(["sleep", "300"])
    try:
        for root_read in (False, True):
            result = _run(f"kill -9 {sleeper.pid} {root_sleeper.pid}; kill -9 1; "
                          f"kill -9 -1; pkill -9 sleep; ps -p {sleeper.pid} -o pid=; echo done",
                          owner, root_read=root_read)
            assert "done" in result.output
            assert str(sleeper.pid) in result.output.split()  # seen, not reached
            assert sleeper.poll() is None and root_sleeper.poll() is None
    finally:
        for proc in (sleeper, root_sleeper):
            proc.kill()
            proc.wait()


def test_timeout_kills_everything_in_the_namespace(owner: Identity) -> None:
    marker = f"{secrets.randbelow(10**6) + 1}.{secrets.randbelow(999) + 1}"
    result = run_confined(f"(trap '' TERM HUP; sleep {marker}) & sleep {marker}", owner,
                          timeout=0.5)
    assert result.timed_out and result.error is None

    def alive() -> list[int]:
        found = []
        for proc in Path("/proc").iterdir():
            with contextlib.suppress(OSError):
                if proc.name.isdigit() and marker.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
        return found

    assert alive() == []


def test_cancel_and_output_cap(owner: Identity) -> None:
    cancel = threading.Event()
    seen: list[str] = []

    def output(chunk: str) -> None:
        seen.append(chunk)
        cancel.set()

    result = run_confined("echo started; sleep 30", owner, cancel=cancel, on_output=output)
    assert result.cancelled and "started" in "".join(seen)
    capped = run_confined("seq 1 20000", owner, max_output=1024)
    assert capped.truncated and capped.output.endswith("20000\n") and len(capped.output) <= 1024


def test_no_confinement_no_run(owner: Identity) -> None:
    """A helper that cannot start or cannot mount: the command never runs, with a reason."""
    marker = Path(owner.home) / "ran"
    missing = run_confined(f"touch {marker}; echo ran", owner, python="/nonexistent/python3")
    assert missing.exit_code is None and missing.output == ""
    assert missing.error is not None and "did not run" in missing.error
    failing = run_confined("echo ran", owner, scratch=("/nonexistent-anna-dir",))
    assert failing.exit_code is None and "ran" not in failing.output
    assert failing.error is not None and "mount /nonexistent-anna-dir" in failing.error
    broken = run_confined("echo ran", owner, python="/bin/false")
    assert broken.error is not None and "before the command started" in broken.error
    assert not marker.exists()


def test_per_user_daemon_confines_with_a_user_namespace(tmp_path: Path) -> None:
    """The runner as an unprivileged uid (a per-user daemon): ``unshare -Urm`` style."""
    probe = subprocess.run(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY),
                            "--clear-groups", "unshare", "-Ur", "true"], check=False,
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unprivileged user namespaces are not allowed here: {probe.stderr!r}")
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip("no system python3 an unprivileged uid can run")
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from annad.confine.runner import Identity, run_confined\n"
        "who = Identity(uid=65534, gid=65534, home='/tmp')\n"
        "r = run_confined(\"id -u; touch /tmp/anna-userns-$$ || echo ro; grep -E "
        "'^(CapEff|NoNewPrivs)' /proc/self/status; ps -e --no-headers | wc -l; "
        "grep -vc ' ro,' /proc/self/mountinfo\", who, python=sys.executable)\n"
        "print(r.error); print(r.output)\n"
        "r = run_confined('id', who, root_read=True, python=sys.executable); print(r.error)\n")
    done = subprocess.run(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY),
                           "--clear-groups", SYSTEM_PYTHON, "-c", script, str(REPO)],
                          check=False, capture_output=True, text=True, cwd="/", timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["None", str(NOBODY)], done.stdout
    assert "Read-only file system" in lines[2] and lines[3] == "ro"
    assert "CapEff:\t0000000000000000" in lines and "NoNewPrivs:\t1" in lines
    assert int(lines[6]) > 5 and lines[7] == "0"  # the machine's processes, all read-only
    assert "never as root" in lines[-1]


@pytest.mark.parametrize(("command", "expected"), [
    ("sudo id -u", False),
    ("id -u", False),
    ("sudo cat /etc/hostname", False),
    ("sudo ls /root", True),
    ("sudo -n ls -la /root/", True),
    ("ls --directory=/root", True),
    ("sudo journalctl -b -p err", True),
    ("sudo ls /root/*", False),  # a pattern is no evidence of anything
    ("sudo cat /nonexistent/file", False),
])
def test_root_read_needs_evidence_not_sudo(command: str, expected: bool) -> None:
    if expected and not Path("/root").exists():
        pytest.skip("no /root")
    if "/root" in command and os.stat("/root").st_mode & 0o005:
        pytest.skip("/root is readable by everyone here")
    assert needs_root_read(command, NOBODY, (NOBODY,)) is expected
    assert needs_root_read(command, 0, ()) is True


def test_helper_uses_only_the_standard_library() -> None:
    """The helper runs with ``-I -S``: nothing from site-packages may be imported."""
    done = subprocess.run([sys.executable, "-I", "-S", "-c",
                           "import runpy, sys; sys.argv=['x']; "
                           f"runpy.run_path({str(REPO / 'annad' / 'confine' / 'helper.py')!r})"],
                          check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_cancel_while_the_confinement_is_built_is_a_cancel(owner: Identity) -> None:
    """Stopped from outside before the command started: cancelled, not "no confinement"."""
    cancel = threading.Event()
    cancel.set()
    result = run_confined("sleep 30", owner, cancel=cancel)
    assert result.cancelled and result.error is None


def test_capless_root_cannot_reach_roots_unix_sockets(tmp_path: Path, owner: Identity) -> None:
    """Root's own servers (tmux, systemd, D-Bus, an agent) trust a peer of uid 0: a root read
    may not create a Unix socket at all, wherever the server listens."""
    server_dir = Path(f"/tmp/anna-tmux-{secrets.token_hex(4)}")
    server_dir.mkdir(mode=0o700)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(server_dir / "default"))
    server.listen(1)
    try:
        code = ("import socket; s = socket.socket(socket.AF_UNIX); "
                f"s.connect({str(server_dir / 'default')!r}); print('connected')")
        result = _run(f"python3 -c \"{code}\" 2>&1 | tail -1; "
                      "python3 -c 'import socket; socket.socketpair(); print(\"pair\")'",
                      owner, root_read=True)
        assert result.output.splitlines() == ["PermissionError: [Errno 13] Permission denied",
                                              "pair"]
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()
        # the owner gets a Unix socket only for a read verb that needs the bus
        mine = _run("python3 -c 'import socket; socket.socket(socket.AF_UNIX); print(1)' "
                    "2>&1 | tail -1", owner)
        assert "Permission denied" in mine.output
    finally:
        server.close()
        shutil.rmtree(server_dir, ignore_errors=True)


def test_signals_are_as_in_a_shell(owner: Identity) -> None:
    """Python ignores SIGPIPE; the confined command must not inherit that (``yes | head``)."""
    result = _run("yes | head -1; grep -E '^SigIgn' /proc/self/status", owner)
    assert result.output.splitlines() == ["y", "SigIgn:\t0000000000000000"], result.output


def test_one_helper_serves_consecutive_runs(owner: Identity) -> None:
    """The steps of a plan go to one confinement helper (their parent), not one each; another
    confinement (capless root) has its own."""
    first, second = _run("echo $PPID", owner), _run("echo $PPID", owner)
    assert first.output == second.output and first.output.strip().isdigit()
    helper = Path(f"/proc/{first.output.strip()}/cmdline").read_bytes().split(b"\0")
    assert any(part.endswith(b"confine/helper.py") for part in helper), helper
    root = _run("echo $PPID", owner, root_read=True)
    assert root.output != first.output


def test_a_helper_killed_while_idle_is_replaced(owner: Identity) -> None:
    first = _run("echo $PPID", owner).output.strip()
    os.kill(int(first), 9)
    second = _run("echo $PPID", owner)
    assert second.exit_code == 0 and second.output.strip() not in ("", first)


def test_a_refused_run_leaves_its_helper_in_step(owner: Identity) -> None:
    """A run the walls refuse (a limit the kernel cannot take) answers once; the helper's
    next run gets its own answer, not the refused one's."""
    helper = _run("echo $PPID", owner).output
    refused = run_confined("echo ran", owner, timeout=30, limits=RunLimits(memory=2 ** 70))
    assert refused.error is not None and refused.refused and "ran" not in refused.output
    after = _run("echo $PPID; echo fine", owner)
    assert after.output == helper + "fine\n" and after.exit_code == 0
