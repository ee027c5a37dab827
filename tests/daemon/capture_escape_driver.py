"""Run one probe step through the real capture (a root step) and say what it reached.

``unshare -n -u -i -m --propagation private PYTHON capture_escape_driver.py SPEC_FILE``: the
driver lives in private network, UTS, IPC and mount namespaces, so an effect that leaks past
the capture lands in *those* (a dummy link, a hostname, a forwarding sysctl) and dies with the
driver — never on the machine. It owns every target a probe may aim at, all in the same
namespaces the step runs in:

- ``{UNIX}``: a listening pathname Unix socket in a directory under /run (the real /run is
  what the capture binds) and ``{ABSTRACT}``: a listening abstract one;
- ``{TCP}``: a listening TCP port on 127.0.0.1, ``{TCP6}`` one on ::1, ``{HOST}`` one on
  192.0.2.1 and ``{HOST6}`` one on 2001:db8::1 (this namespace's own addresses on a veth
  link, as a machine's LAN address is), ``{UDP}`` a bound UDP port on 127.0.0.1;
- 198.51.100.0/24 and 2001:db8:1::/64 routed ``unreachable``: an address elsewhere, which
  the kernel's routing refuses at once (``EHOSTUNREACH``/``ENETUNREACH``), never a packet
  sent;
- ``{PID}``: a ``sleep`` of root's with every capability, ``{BARE}``: one of root's with none
  (what ``/proc/PID/root`` and ptrace of a same-uid process need);
- ``{SHMKEY}``: the key of a SysV shared memory segment of the driver's;
- ``{L}``: a directory holding ``secret`` (mode 0600) from before the step;
- ``{T}``: a scratch directory (its writes are captured, never committed: the layers are
  dropped at the end);
- with ``"special": true`` in the spec: ``{FIFO}``, a FIFO under the /run tmpfs with the
  driver reading its other end (what it got is reported), and in ``{L}`` device nodes the
  step may find on a disk: ``{LOOP}``, a block node of a loop device the driver attached to a
  scratch image of its own (detached after; the image's first bytes are reported), and
  ``{KMSG}``, a character node with /dev/kmsg's numbers (a probe only opens it, never writes).

The spec (JSON) names the state directory and the file holding the probe's command text (never
handed to a shell by the test); ``"no_cgroup_v2": true`` unmounts every cgroup v2 mount in the
driver's mount namespace first (a machine where the loopback wall cannot be built);
``"owner": UID`` runs the probe as a per-user daemon of that uid captures it (a user namespace,
no cgroup wall: its changes and left processes are not reported). The driver prints one JSON object: the step's result, the
observed change set, and what each target saw.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from annad.capture.layers import LAYERS, read_back, run_step
from annad.confine import capture_filter
from annad.confine.results import RunResult
from annad.stepspec import StepSpec, Who

OWNER_PYTHON = "/usr/bin/python3"
"""The capture helper's interpreter for an owner (standard library only, ``-I -S``)."""


def _listener(family: int, address: str | tuple[str, int]) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.bind(address)
    sock.listen(8)
    sock.setblocking(False)
    return sock


def _reached(sock: socket.socket) -> bool:
    """Whether anything connected (the connection is queued: no waiting needed)."""
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def _received(sock: socket.socket) -> bool:
    """Whether a datagram arrived (it is queued when the sender's call returned)."""
    try:
        sock.recv(64)
    except BlockingIOError:
        return False
    return True


def _alive(proc: subprocess.Popen[bytes]) -> bool:
    return proc.poll() is None


def main(argv: list[str]) -> int:
    """Run the probe of ``argv[1]`` and print what it reached."""
    for kind in ("net", "mnt"):  # its links, routes and mounts must never be the machine's
        if os.readlink(f"/proc/self/ns/{kind}") == os.readlink(f"/proc/{os.getppid()}/ns/{kind}"):
            raise SystemExit("run the driver as unshare -n -u -i -m --propagation private")
    spec = json.loads(Path(argv[1]).read_text())
    state = Path(spec["state"])
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    if spec.get("no_cgroup_v2"):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            if line.partition(" - ")[2].startswith("cgroup2 "):
                subprocess.run(["umount", "-l", line.split()[4]], check=True)
    for argv in (["link", "add", "anna0", "type", "veth", "peer", "name", "anna1"],
                    ["link", "set", "anna0", "up"], ["link", "set", "anna1", "up"],
                    ["addr", "add", "192.0.2.1/24", "brd", "+", "dev", "anna0"],
                    ["addr", "add", "2001:db8::1/64", "dev", "anna0", "nodad"],
                    ["route", "add", "unreachable", "198.51.100.0/24"],
                    ["-6", "route", "add", "unreachable", "2001:db8:1::/64"]):
        subprocess.run(["ip", *argv], check=True)
    run_dir = Path(tempfile.mkdtemp(prefix="anna-probe-", dir="/run"))
    # a mount below /run, as a machine's /run is one: the capture then binds the real /run
    # (read-only), where D-Bus and PID 1 have their sockets, instead of overlaying it
    subprocess.run(["mount", "-t", "tmpfs", "anna-probe", str(run_dir)], check=True)
    scratch = state / "scratch"
    scratch.mkdir()
    lower = state / "lower"  # what was there before the step: the overlays' lower layer
    lower.mkdir()
    (lower / "secret").write_text("decoy secret\n")
    (lower / "secret").chmod(0o600)
    unix = _listener(socket.AF_UNIX, str(run_dir / "sock"))
    abstract_name = f"anna-probe-{os.getpid()}"
    abstract = _listener(socket.AF_UNIX, "\0" + abstract_name)
    tcp = _listener(socket.AF_INET, ("127.0.0.1", 0))
    tcp6 = _listener(socket.AF_INET6, ("::1", 0))
    host = _listener(socket.AF_INET, ("192.0.2.1", 0))
    host6 = _listener(socket.AF_INET6, ("2001:db8::1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    libc = ctypes.CDLL(None, use_errno=True)
    shm_key = 0x616E6E61  # a SysV segment of the driver's IPC namespace ("anna")
    if libc.shmget(shm_key, 4096, 0o1000 | 0o600) < 0:  # IPC_CREAT
        raise OSError(ctypes.get_errno(), "shmget")
    special = _Special(run_dir, lower, state) if spec.get("special") else None
    full = subprocess.Popen(["sleep", "600"])
    bare = subprocess.Popen(["setpriv", "--inh-caps=-all", "--bounding-set=-all",
                             "sleep", "600"])
    try:
        command = Path(spec["command_file"]).read_text().format(
            UNIX=run_dir / "sock", ABSTRACT=abstract_name, TCP=tcp.getsockname()[1],
            TCP6=tcp6.getsockname()[1], HOST=host.getsockname()[1],
            HOST6=host6.getsockname()[1], UDP=udp.getsockname()[1],
            PID=full.pid, BARE=bare.pid, T=scratch, RUN=run_dir, L=lower,
            SHMKEY=shm_key, **(special.names() if special else {}))
        directory = state / "step"
        if spec.get("owner") is not None:
            result, changes, left = _as_owner(int(spec["owner"]), command), [], []
        else:
            step = StepSpec(index=0, step_id="probe", command=command, scope="system")
            who = Who(uid=0, gid=0, groups=(), user="root", home=str(state))
            capture = run_step(step, who, directory, timeout=60, max_output=1 << 16,
                               on_output=None, cancel=None, on_spawn=None, python=None)
            result = _result(capture.result)
            changes = read_back(directory, capture.layers)
            left = [pid for pid in _pids_in(directory / LAYERS) if _process(pid)]
        report = {
            **result,
            "changes": [{"path": c.path, "kind": c.kind, "mode": c.mode,
                         "xattrs": sorted(c.xattrs)} for c in changes],
            "unix": _reached(unix), "abstract": _reached(abstract), "tcp": _reached(tcp),
            "tcp6": _reached(tcp6), "host": _reached(host), "host6": _reached(host6),
            "udp": _received(udp),
            "full_alive": _alive(full), "bare_alive": _alive(bare),
            "hostname": os.uname().nodename, "links": [n for _, n in socket.if_nameindex()],
            "addresses": subprocess.run(["ip", "-o", "addr"], capture_output=True,
                                        text=True, check=True).stdout,
            "link_lines": subprocess.run(["ip", "-o", "link"], capture_output=True,
                                         text=True, check=True).stdout,
            "ip_forward": Path("/proc/sys/net/ipv4/ip_forward").read_text().strip(),
            "escaped_files": sorted(p.name for p in run_dir.iterdir() if p.name != "sock"),
            "left_running": left,
            **(special.report() if special else {}),
        }
        print(json.dumps(report))
    finally:
        for proc in (full, bare):
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGKILL)
            proc.wait()
        for sock in (unix, abstract, tcp, tcp6, host, host6, udp):
            sock.close()
        if special is not None:
            special.close()
        # the tmpfs is this namespace's; the directory under it is the machine's /run's
        subprocess.run(["umount", str(run_dir)], check=True)
        run_dir.rmdir()
        _drop_layers(state / "step")
    return 0


class _Special:
    """The FIFO and device-node targets (see the module text)."""

    def __init__(self, run_dir: Path, lower: Path, state: Path) -> None:
        self.fifo = run_dir / "initctl"
        os.mkfifo(self.fifo, 0o600)
        # the reader's end open first: a writer's open then succeeds at once, and what it
        # wrote waits in the pipe for report()
        self.reader = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)
        self.image = state / "loop.img"
        self.image.write_bytes(bytes(1 << 20))
        self.loop = subprocess.run(["losetup", "-f", "--show", str(self.image)],
                                   capture_output=True, text=True, check=True).stdout.strip()
        node = os.stat(self.loop).st_rdev
        self.loop_node = lower / "loop"
        os.mknod(self.loop_node, 0o600 | stat.S_IFBLK, node)
        self.kmsg_node = lower / "kmsg"
        os.mknod(self.kmsg_node, 0o600 | stat.S_IFCHR, os.makedev(1, 11))

    def names(self) -> dict[str, object]:
        return {"FIFO": self.fifo, "LOOP": self.loop_node, "KMSG": self.kmsg_node}

    def report(self) -> dict[str, Any]:
        try:
            got = os.read(self.reader, 4096)
        except BlockingIOError:
            got = b""
        with self.image.open("rb") as image:
            head = image.read(4096)
        return {"fifo_got": got.decode("latin-1"), "loop_written": any(head)}

    def close(self) -> None:
        os.close(self.reader)
        subprocess.run(["losetup", "-d", self.loop], check=False)
        for node in (self.loop_node, self.kmsg_node):
            node.unlink(missing_ok=True)


def _result(result: RunResult) -> dict[str, Any]:
    return {"exit": result.exit_code, "output": result.output, "error": result.error,
            "timed_out": result.timed_out}


def _as_owner(owner: int, command: str) -> dict[str, Any]:
    """The probe as a per-user daemon of uid ``owner`` (not root) captures it: in a forked
    child that became that uid, a user-scope step, its layers in a directory of the owner's
    (removed after), the system interpreter for the helper (the venv's may be out of reach)."""
    # other tests' mounts under /tmp (a daemon's state disk in a 0700 directory of root's)
    # are not this probe's subject and the owner cannot reach them: gone from this namespace
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4]
        if point.startswith("/tmp/"):
            subprocess.run(["umount", "-l", point], check=False, capture_output=True)
    home = Path(tempfile.mkdtemp(prefix="anna-owner-"))
    os.chown(home, owner, owner)
    capture_filter.program()  # built (and kept) while the interpreter's modules are reachable
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.close(read)
            os.setgroups([])
            os.setresgid(owner, owner, owner)
            os.setresuid(owner, owner, owner)
            step = StepSpec(index=0, step_id="probe", command=command, scope="user")
            who = Who(uid=owner, gid=owner, groups=(), user="nobody", home=str(home))
            capture = run_step(step, who, home / "step", timeout=60, max_output=1 << 16,
                               on_output=None, cancel=None, on_spawn=None,
                               python=OWNER_PYTHON)
            os.write(write, json.dumps(_result(capture.result)).encode())
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    _drop_layers(home)
    return dict(json.loads(data))


def _pids_in(layers: Path) -> list[int]:
    """PIDs a probe wrote into files named ``bgpid`` (a process it tried to leave running)."""
    out = []
    for path in layers.rglob("bgpid"):
        with contextlib.suppress(ValueError, OSError):
            out.append(int(path.read_text().split()[0]))
    return out


def _process(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _drop_layers(directory: Path) -> None:
    """The upper layers hold what the probe wrote: dropped, never committed (an immutable
    file a probe managed to make is made mutable first, or it could never be removed)."""
    if directory.exists():
        subprocess.run(["chattr", "-R", "-f", "-i", str(directory)], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
