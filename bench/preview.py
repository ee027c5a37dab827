"""Preview cost: median and p95 ms of a 5-step file plan and of a pacman plan, in one run.

The file plan edits a scratch sshd_config with sed, appends to a shell rc (``bash -n`` runs
on the previewed copy), creates, chmods and deletes files — all over the throw-away overlay,
on a tree under a temporary directory. The pacman plan is ``pacman -S`` of a package with a
dependency against a scratch root made with the real makepkg, repo-add and pacman
(tests/pacmanfix.py). Goal (issue 10): <= 300 ms for the file plan on this machine.
Needs root (namespaces, overlays, pacman -Sy on the scratch root).
Run: .venv/bin/python bench/preview.py [ROUNDS]
"""

from __future__ import annotations

import os
import resource
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from anna_common.protocol.models import SessionEnv  # noqa: E402
from anna_common.risk.rules.base import AssessContext  # noqa: E402
from anna_common.validate import validate  # noqa: E402
from annad.journal.records import who_of  # noqa: E402
from annad.preview import engine  # noqa: E402
from tests.daemonfix import make_plan  # noqa: E402
from tests.pacmanfix import HAVE_PACMAN, LocalRepo, PacmanRoot, PkgSpec, build_package  # noqa: E402

GOAL_FILE_MS = 300.0


def file_plan(base: Path) -> list[tuple[str, str, str]]:
    """Five file steps on a scratch tree."""
    (base / "etc/ssh").mkdir(parents=True)
    (base / "etc/ssh/sshd_config").write_text("Port 22\n#PermitRootLogin yes\nUsePAM yes\n")
    (base / ".bashrc").write_text("alias ll='ls -l'\n")
    (base / "old.conf").write_text("old\n")
    return [
        ("sed", f"sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' {base}/etc/ssh/sshd_config",
         "MEDIUM"),
        ("rc", f"echo 'export EDITOR=nvim' >> {base}/.bashrc", "LOW"),
        ("new", f"printf 'a=1\\n' > {base}/etc/new.conf", "LOW"),
        ("mode", f"chmod 600 {base}/etc/new.conf", "LOW"),
        ("gone", f"rm {base}/old.conf", "LOW"),
    ]


def pacman_plan(base: Path) -> list[tuple[str, str, str]]:
    """``pacman -S`` of a package that pulls in a dependency, on a scratch root."""
    packages = base / "pkgs"
    packages.mkdir()
    hello = build_package(PkgSpec(), packages / "hello")
    app = build_package(PkgSpec(name="annatest-app", version="2.0",
                                depends=("annatest-hello",)), packages / "app")
    root = PacmanRoot.create(base / "pacman")
    root.add_repo(LocalRepo.create(base / "repo", [hello, app]))
    root.sync()
    return [("install", shlex.join(["pacman", *root.args(), "-S", "--noconfirm",
                                     "annatest-app"]), "MEDIUM")]


def _cpu_s() -> float:
    """CPU seconds of this process and its waited-for children (user + system)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), \
        resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure(steps: list[tuple[str, str, str]], rounds: int) -> tuple[list[float], list[float]]:
    """Wall ms and CPU ms of ``engine.compute`` per round (the daemon's whole preview at
    submit). CPU time is what the preview costs the machine whatever else runs on it."""
    result = validate(make_plan(steps), AssessContext(distro="arch", home="/root"))
    assert result.plan is not None, result.errors
    who = who_of(0, "/root", SessionEnv())
    times, cpu = [], []
    for _ in range(rounds):
        started, cpu_started = time.perf_counter(), _cpu_s()
        preview = engine.compute(result.plan, who, engine.Options())
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((_cpu_s() - cpu_started) * 1000)
        assert all(s.reason is None for s in preview.steps), [s.reason for s in preview.steps]
    return times, cpu


def summary(name: str, figures: tuple[list[float], list[float]]) -> str:
    """``name: median X ms, p95 Y ms`` (wall) and the median CPU ms over the rounds."""
    ordered = sorted(figures[0])
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (f"{name:<22} median {statistics.median(ordered):7.1f} ms   p95 {p95:7.1f} ms   "
            f"(CPU median {statistics.median(figures[1]):6.1f} ms)")


def main() -> int:
    """Print both figures side by side; exit 1 when the file plan misses its goal."""
    if os.geteuid() != 0:
        print("bench/preview.py needs root (namespaces, overlays, pacman on a scratch root)")
        return 2
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    with tempfile.TemporaryDirectory(prefix="anna-bench-preview-") as tmp:
        base = Path(tmp)
        files = measure(file_plan(base / "files"), rounds)
        print(f"preview cost over {rounds} rounds (engine.compute, as at submit); "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(summary("5-step file plan", files))
        if HAVE_PACMAN:
            print(summary("pacman -S (1 + 1 dep)", measure(pacman_plan(base), rounds)))
        else:
            print("pacman plan: skipped (pacman tools missing)")
    median = statistics.median(files[0])
    print(f"goal: file plan <= {GOAL_FILE_MS:.0f} ms: {'met' if median <= GOAL_FILE_MS else 'MISSED'}")
    return 0 if median <= GOAL_FILE_MS else 1


if __name__ == "__main__":
    sys.exit(main())
