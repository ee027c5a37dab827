"""Issue 8, the backup/undo side: honest undo of uncaptured writes (class 4), a restore
allow-list the request cannot widen (class 6), rollback that leaves what changed since
(class 9), paths as bytes (class 12) and the seed's run-time-named backup copy.

Real daemons (tests/daemonfix.py), real files in temporary directories; the executor
tests use the real executor, journal and runner.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from anna_common.plan import ActionPlan
from anna_common.protocol.models import ExecEvent, PlanStatus, SessionEnv
from anna_common.risk import tiers
from anna_common.risk.assess import assess
from annactl.core.daemon_client import DaemonClient
from annad.backups import manifest as manifests
from annad.backups.manifest import (
    Entry,
    Ident,
    StepManifest,
    TargetSnapshot,
    escape_path,
    unescape_path,
)
from annad.backups.targets import snapshot_targets
from annad.confine import runner
from annad.execution.executor import Executor
from annad.execution.undo import TMP_ROOTS, allowed_roots
from annad.journal.rows import PlanRow
from annad.journal.store import Journal
from annad.stepspec import Limits, StepSpec, Who
from tests.daemonfix import REPO, RunningDaemon, make_plan, running_daemon
from tests.waiting import WAIT_S

NOBODY = 65534
needs_root_tools = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("curl"),
    reason="needs root, setpriv and curl to act as a second uid")


def run(client: DaemonClient, plan: dict[str, Any], *, high: bool = False,
        session: SessionEnv | None = None) -> tuple[str, list[ExecEvent]]:
    submitted = client.submit(ActionPlan.model_validate(plan))
    # a HIGH approval carries the word the person typed (here: the one the daemon names)
    events = list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                 high_confirmed=high, session=session,
                                 confirm_word=tiers.plan_word(submitted.annotated) if high
                                 else None))
    return submitted.plan_id, events


def undo_of(result: Any) -> list[tuple[str, str, bool]]:
    return [(u.step_id, u.action, u.ok) for u in result.undo]


# --------------------------------------------------------------------------- class 4


@pytest.fixture
def executor() -> Iterator[tuple[Executor, Journal, Path]]:
    """A real executor, journal and runner; the home is a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="anna-undo-") as base:
        home = Path(base) / "home"
        home.mkdir()
        journal = Journal(Path(base) / "state" / "journal.sqlite3")
        limits = Limits(step_timeout_s=30, max_output=65536, backup_max_bytes=1 << 24,
                        backup_max_files=1000)
        ex = Executor(journal=journal, backups=Path(base) / "state" / "backups",
                      runner=runner, limits=limits, root_daemon=False)
        # the live path: what a per-user daemon without root (no capture) runs steps on
        ex.capture = False
        yield ex, journal, home
        journal.close()


def _plan(journal: Journal, plan_id: str, home: Path, steps: list[StepSpec]) -> None:
    journal.add_plan(PlanRow(plan_id=plan_id, digest="0" * 64, status=PlanStatus.SUBMITTED,
                             created_at=0.0, updated_at=0.0, caller_uid=os.getuid(),
                             source="test", request="", home=str(home), plan_json="{}",
                             annotated_json="{}", error=None), [s.step_id for s in steps])


def _who(home: Path) -> Who:
    return Who(uid=os.getuid(), gid=os.getgid(), groups=(), user="test", home=str(home))


INTERPRETER = "python3 -c \"open('data.txt', 'w').write('written by code')\""


@pytest.mark.parametrize(("rollback", "ok", "says"), [
    (None, False, "no rollback command"),
    ("rm -f ~/data.txt", True, "relied on the plan's rollback command"),
    ("false", False, "rollback command failed"),
])
def test_uncaptured_write_is_never_reported_undone_on_annas_word(
        executor: tuple[Executor, Journal, Path], rollback: str | None, ok: bool,
        says: str) -> None:
    ex, journal, home = executor
    steps = [StepSpec(index=0, step_id="code", command=INTERPRETER, scope="user",
                      rollback_command=rollback, uncaptured=True)]
    _plan(journal, "p1", home, steps)
    events: list[ExecEvent] = []
    assert ex.run("p1", steps, _who(home), events.append, threading.Event()) is \
        PlanStatus.SUCCEEDED
    assert (home / "data.txt").read_text() == "written by code"
    results = ex.undo("p1", [0], events.append)
    uncaptured = [r for r in results if r.action == "uncaptured"]
    assert len(uncaptured) == 1 and uncaptured[0].ok is ok
    assert "Anna could not back up what this step wrote" in uncaptured[0].message
    assert says in uncaptured[0].message
    assert all(r.ok for r in results) is ok  # the plan ends rolled_back only when it relied
    rows = [u for u in journal.undo_results("p1") if u.action == "uncaptured"]
    assert rows and rows[0].ok is ok and "could not back up" in rows[0].message
    assert (home / "data.txt").exists() is (not ok)


def test_failed_plan_with_an_uncaptured_step_ends_rollback_failed(
        executor: tuple[Executor, Journal, Path]) -> None:
    ex, journal, home = executor
    steps = [StepSpec(index=0, step_id="code", command=INTERPRETER, scope="user",
                      uncaptured=True),
             StepSpec(index=1, step_id="boom", command="exit 4", scope="user")]
    _plan(journal, "p2", home, steps)
    events: list[ExecEvent] = []
    status = ex.run("p2", steps, _who(home), events.append, threading.Event())
    assert status is PlanStatus.ROLLBACK_FAILED
    assert events[-1].code == "ROLLBACK_FAILED" and "failed in part" in (events[-1].message or "")
    row = journal.get_plan("p2")
    assert row is not None and row.error is not None and row.error["detail"]["undo_ok"] is False


def test_uncaptured_write_through_the_daemon_is_observed_and_undone(
        user_daemon: RunningDaemon) -> None:
    """Code the analysis cannot follow (``uncaptured_write``) runs captured on a root daemon:
    what it really wrote is backed up and undone, no rollback command needed."""
    if os.geteuid() != 0:
        pytest.skip("captured steps need a root daemon")
    client = user_daemon.client()
    plan_id, events = run(client, make_plan([("code", INTERPRETER, "HIGH")]), high=True)
    assert events[-1].status == "succeeded", events[-1]
    assert (user_daemon.home / "data.txt").read_text() == "written by code"
    result = client.rollback(plan_id)
    assert result.status == "rolled_back", result.undo
    assert ("code", "delete", True) in undo_of(result)
    assert not (user_daemon.home / "data.txt").exists()


# --------------------------------------------------------------------------- class 6


def test_allowed_roots_come_from_the_uid_not_the_session() -> None:
    assert "/" not in allowed_roots(NOBODY, "/")  # nobody's passwd home is / on Arch
    roots = allowed_roots(os.getuid(), "/home/someone/")
    assert roots[0] == "/home/someone" and "/tmp" in roots
    runtime = f"/run/user/{os.getuid()}"
    assert (runtime in roots) is (os.path.isdir(runtime) and not os.path.islink(runtime)
                                  and os.stat(runtime).st_uid == os.getuid())
    assert f"/run/user/{NOBODY}" not in allowed_roots(NOBODY, "/home/x") or \
        os.stat(f"/run/user/{NOBODY}").st_uid == NOBODY
    with tempfile.TemporaryDirectory(prefix="anna-home-") as base:
        (Path(base) / "var-home").mkdir()
        (Path(base) / "home").symlink_to(Path(base) / "var-home")  # /home -> /var/home
        roots = allowed_roots(NOBODY, f"{base}/home")
        assert roots[:2] == (f"{base}/home", f"{base}/var-home")


def _as_nobody(daemon: RunningDaemon, method: str, path: str, body: object = None,
               *, lines: bool = False) -> tuple[int, Any]:
    argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            "curl", "-s", "-o", "-", "-w", "\n%{http_code}", "--unix-socket", str(daemon.socket),
            "-X", method, "-H", "Content-Type: application/json"]
    if body is not None:
        argv += ["--data-binary", json.dumps(body)]
    proc = subprocess.run([*argv, f"http://annad{path}"], capture_output=True, text=True,
                          timeout=60, check=False)
    text, _, code = proc.stdout.rpartition("\n")
    if lines:
        return int(code), [json.loads(line) for line in text.splitlines() if line.strip()]
    return int(code), json.loads(text)


HOSTILE_SESSIONS = [
    {"XDG_RUNTIME_DIR": "/"},
    {"XDG_RUNTIME_DIR": "DECOY"},
    {"XDG_RUNTIME_DIR": "/run/../"},
    {"XDG_RUNTIME_DIR": "DECOY/..", "LANG": "C"},
]


@needs_root_tools

def _outside_temp_roots() -> Path:
    """A place for the decoy that no allowed root covers: the checkout, unless it was cloned
    under a temporary directory (as CI may do), else root-owned /run."""
    for base in (REPO, Path("/run"), Path("/srv")):
        if base.is_dir() and not any(base == Path(t) or Path(t) in base.parents
                                     for t in TMP_ROOTS):
            return base
    pytest.skip("no directory outside the temporary roots to hold the decoy")


@pytest.mark.parametrize("session", HOSTILE_SESSIONS)
def test_hostile_session_cannot_widen_what_root_restores(session: dict[str, str]) -> None:
    """nobody links ~/link to a root-owned decoy outside every allowed root and sends a
    session claiming that place as its runtime dir: root restores nothing there."""
    decoy = Path(tempfile.mkdtemp(prefix=".anna-decoy-", dir=_outside_temp_roots()))
    try:
        (decoy / "shadow").write_text("root:$6$precious:19000::::::\n")
        before = (decoy / "shadow").stat()
        hostile = {k: v.replace("DECOY", str(decoy)) for k, v in session.items()}
        with running_daemon(user_mode=False, env={"ANNAD_GROUP": "nogroup"}) as daemon:
            os.chown(daemon.home, NOBODY, NOBODY)
            (daemon.home / "link").symlink_to(decoy)
            os.lchown(daemon.home / "link", NOBODY, NOBODY)
            for directory in (daemon.base, daemon.socket.parent):
                directory.chmod(0o755)
            daemon.socket.chmod(0o666)
            # the write fails (nobody cannot write the decoy): the step fails; it ran
            # captured, so nothing of it landed and there is nothing for root to restore
            plan = make_plan([("w", "echo pwned > ~/link/shadow", "LOW")])
            status, submitted = _as_nobody(daemon, "POST", "/v1/plans", {"plan": plan})
            assert status == 200, submitted
            status, events = _as_nobody(
                daemon, "POST", f"/v1/plans/{submitted['plan_id']}/execute",
                {"digest": submitted["digest"], "confirmed": True, "session": hostile},
                lines=True)
            assert status == 200, events
            finished = events[-1]
            assert finished["status"] == "failed", events
            assert not [e for e in events if e["type"] == "undo_finished"], events
        after = (decoy / "shadow").stat()
        assert (decoy / "shadow").read_text() == "root:$6$precious:19000::::::\n"
        assert (after.st_ino, after.st_ctime_ns, after.st_mtime_ns) == (
            before.st_ino, before.st_ctime_ns, before.st_mtime_ns)
        assert sorted(p.name for p in decoy.iterdir()) == ["shadow"]
    finally:
        shutil.rmtree(decoy, ignore_errors=True)


# --------------------------------------------------------------------------- class 9


def test_created_file_edited_by_the_person_is_kept(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    made = user_daemon.home / "notes.txt"
    plan_id, events = run(client, make_plan([("w", "echo created > ~/notes.txt", "LOW")]))
    assert events[-1].status == "succeeded"
    made.write_text("my own notes, written after the plan\n")
    result = client.rollback(plan_id)
    assert result.status == "rollback_failed"
    assert undo_of(result) == [("w", "conflict", False)]
    assert "changed since the plan ran" in result.undo[0].message
    assert result.undo[0].target == str(made)
    assert made.read_text() == "my own notes, written after the plan\n"


def test_created_tree_with_a_file_added_later_is_kept(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    proj = user_daemon.home / "proj"
    plan_id, _ = run(client, make_plan([
        ("mk", "mkdir -p ~/proj/sub && echo a > ~/proj/sub/a.txt", "LOW")]))
    (proj / "later.txt").write_text("added by the person\n")
    result = client.rollback(plan_id)
    assert result.status == "rollback_failed"
    assert {a for _, a, _ in undo_of(result)} == {"conflict"}
    assert "later.txt was added" in result.undo[0].message
    assert (proj / "later.txt").exists() and (proj / "sub" / "a.txt").exists()


@pytest.mark.parametrize("change", ["edit", "replace_by_symlink", "chmod", "delete"])
def test_edited_file_changed_since_is_left(user_daemon: RunningDaemon, change: str) -> None:
    client = user_daemon.client()
    conf = user_daemon.home / ".config" / "app.conf"
    conf.write_text("volume=3\n")
    plan_id, _ = run(client, make_plan([
        ("edit", "sed -i s/volume=3/volume=9/ ~/.config/app.conf", "LOW")]))
    assert conf.read_text() == "volume=9\n"
    if change == "edit":
        conf.write_text("volume=9\ntheme=dark\n")
    elif change == "replace_by_symlink":
        conf.unlink()
        conf.symlink_to("/dev/null")
    elif change == "chmod":
        conf.chmod(0o600)
    else:
        conf.unlink()
    result = client.rollback(plan_id)
    assert result.status == "rollback_failed"
    assert undo_of(result) == [("edit", "conflict", False)]
    if change == "edit":
        assert conf.read_text() == "volume=9\ntheme=dark\n"
    elif change == "replace_by_symlink":
        assert conf.is_symlink()
    elif change == "chmod":
        assert conf.read_text() == "volume=9\n" and conf.stat().st_mode & 0o777 == 0o600
    else:
        assert not conf.exists()


def test_deleted_file_recreated_by_the_person_is_kept(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    old = user_daemon.home / "old.txt"
    old.write_text("old\n")
    plan_id, _ = run(client, make_plan([("rm", "rm ~/old.txt", "MEDIUM")]))
    old.write_text("a new file with the same name\n")
    result = client.rollback(plan_id)
    assert undo_of(result) == [("rm", "conflict", False)]
    assert old.read_text() == "a new file with the same name\n"


def test_untouched_results_roll_back_through_several_steps(user_daemon: RunningDaemon) -> None:
    """Two steps edit the same file, a third creates one: all undone, byte-exact."""
    client = user_daemon.client()
    conf = user_daemon.home / ".config" / "app.conf"
    conf.write_bytes(b"a=1\nb=2\n\x00tail\n")
    original = conf.read_bytes()
    plan_id, events = run(client, make_plan([
        ("one", "sed -i s/a=1/a=5/ ~/.config/app.conf", "LOW"),
        ("two", "sed -i s/b=2/b=7/ ~/.config/app.conf && echo x > ~/made.txt", "LOW"),
        ("three", "echo more >> ~/made.txt", "LOW")]))
    assert events[-1].status == "succeeded"
    result = client.rollback(plan_id)
    assert result.status == "rolled_back", "\n".join(f"{u.step_id} {u.action} {u.ok} {u.target} {u.message}" for u in result.undo)
    assert conf.read_bytes() == original
    assert not (user_daemon.home / "made.txt").exists()


def test_retry_after_the_person_restored_it_by_hand(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    made = user_daemon.home / "n.txt"
    plan_id, _ = run(client, make_plan([("w", "echo created > ~/n.txt", "LOW")]))
    made.write_text("edited\n")
    assert client.rollback(plan_id).status == "rollback_failed"
    made.unlink()  # the person resolves the conflict: the file is as it was before the plan
    second = client.rollback(plan_id)
    assert second.status == "rolled_back"
    assert undo_of(second) == [("w", "delete", True)]
    assert "already as it was before" in second.undo[0].message


# --------------------------------------------------------------------------- class 12


CAFE = b"caf\xe9.txt"  # Latin-1: not valid UTF-8


def test_non_utf8_name_backed_up_and_restored_under_its_exact_bytes(
        user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    photos = user_daemon.home / "photos"
    photos.mkdir()
    raw_dir = os.fsencode(photos)
    with open(os.path.join(raw_dir, CAFE), "wb") as handle:
        handle.write(b"\xff\xd8 jpeg bytes\n")
    os.mkdir(os.path.join(raw_dir, b"d\x80ir"))
    with open(os.path.join(raw_dir, b"d\x80ir", b"\xfe.conf"), "wb") as handle:
        handle.write(b"x=1\n")
    os.symlink(CAFE, os.path.join(raw_dir, b"link-\xe9"))
    plan_id, events = run(client, make_plan([("rm", "rm -r ~/photos", "HIGH")]), high=True)
    assert events[-1].status == "succeeded", events[-1]
    assert not photos.exists()
    manifest = next(user_daemon.state.glob(f"backups/{plan_id}/000/manifest.json"))
    text = manifest.read_text(encoding="utf-8")
    assert "caf\\\\xe9.txt" in text and "\\ufffd" not in text and "\ufffd" not in text
    result = client.rollback(plan_id)
    assert result.status == "rolled_back", result.undo
    assert sorted(os.listdir(raw_dir)) == [CAFE, b"d\x80ir", b"link-\xe9"]
    with open(os.path.join(raw_dir, CAFE), "rb") as handle:
        assert handle.read() == b"\xff\xd8 jpeg bytes\n"
    assert os.listdir(os.path.join(raw_dir, b"d\x80ir")) == [b"\xfe.conf"]
    assert os.readlink(os.path.join(raw_dir, b"link-\xe9")) == CAFE


def test_non_utf8_name_matched_by_a_glob(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    raw_home = os.fsencode(user_daemon.home)
    with open(os.path.join(raw_home, CAFE), "wb") as handle:
        handle.write(b"precious\n")
    plan_id, events = run(client, make_plan([("rm", "rm ~/*.txt", "HIGH")]), high=True)
    assert events[-1].status == "succeeded", events[-1]
    assert CAFE not in os.listdir(raw_home)
    result = client.rollback(plan_id)
    assert result.status == "rolled_back", result.undo
    assert "caf\\xe9.txt" in result.undo[0].target  # shown escaped, never replaced
    with open(os.path.join(raw_home, CAFE), "rb") as handle:
        assert handle.read() == b"precious\n"


@pytest.mark.parametrize("name", ["caf\udce9.txt", "a\\b", "a\\xe9", "\\\\", "ü/\udc80\\x"])
def test_path_escaping_is_lossless(name: str) -> None:
    assert unescape_path(escape_path(name)) == name
    escape_path(name).encode("utf-8")  # always valid text for JSON and SQLite


def test_a_torn_after_record_falls_back_to_the_flushed_snapshot() -> None:
    with tempfile.TemporaryDirectory(prefix="anna-man-") as base:
        step = Path(base) / "000"
        record = StepManifest(plan_id="p", index=0, step_id="s", scope="user", uid=0, gid=0,
                              home="/h", targets=[TargetSnapshot(
                                  requested="/h/caf\udce9", path="/h/caf\udce9",
                                  entries=[Entry(path="/h/caf\udce9", kind="absent")])])
        manifests.save(step, record)
        record.targets[0].after = [Ident(path="/h/caf\udce9", kind="file", ino=7)]
        manifests.save(step, record, durable=False)
        loaded = manifests.load(step)
        assert loaded is not None and loaded.targets[0].after is not None
        assert loaded.targets[0].path == "/h/caf\udce9"
        (step / manifests.AFTER).write_text('{"plan_id": "p", "tor')
        loaded = manifests.load(step)
        assert loaded is not None and loaded.targets[0].after is None


def test_dotdot_after_a_symlink_is_snapshot_where_the_kernel_writes(
        user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    elsewhere = user_daemon.base / "elsewhere"
    elsewhere.mkdir()
    (user_daemon.home / "link").symlink_to(elsewhere)
    home_twin = user_daemon.home / "x.txt"
    home_twin.write_text("the home's own x.txt\n")
    landed = user_daemon.base / "x.txt"  # link/.. is the link target's parent
    landed.write_text("before\n")
    plan_id, events = run(client, make_plan([("w", "echo after > ~/link/../x.txt", "HIGH")]),
                          high=True)
    assert events[-1].status == "succeeded", events[-1]
    assert landed.read_text() == "after\n"
    assert home_twin.read_text() == "the home's own x.txt\n"
    result = client.rollback(plan_id)
    assert result.status == "rolled_back", result.undo
    assert [u.target for u in result.undo] == [str(landed)]
    assert landed.read_text() == "before\n"
    assert home_twin.read_text() == "the home's own x.txt\n"


def test_dotdot_targets_resolve_like_the_kernel() -> None:
    """Files, globs, a cd'd relative path and a run-time-named entry's directory."""
    with tempfile.TemporaryDirectory(prefix="anna-dots-") as base:
        home, deep = Path(base) / "home", Path(base) / "else" / "sub"
        home.mkdir()
        deep.mkdir(parents=True)
        (home / "link").symlink_to(deep)
        (Path(base) / "else" / "g.txt").write_text("")

        def saved(command: str) -> list[str]:
            found, _ = snapshot_targets(command, home=str(home), cwd=str(home))
            return [t.path.replace(base, "B") for t in found]

        assert saved("echo x > ~/link/../x") == ["B/else/x"]
        assert saved("echo x > $HOME/link/../../x") == ["B/x"]
        assert saved("rm ~/link/../*.txt") == ["B/else/g.txt"]
        assert saved("cd ~/link && echo x > ../y") == ["B/else/y"]
        assert saved("cp ~/a ~/link/../b.$(date +%s)") == ["B/else"]
        assert saved("echo x > ~/plain/../z") == ["B/home/z"]


@pytest.mark.parametrize("target", [
    "~/" + "n" * 300,
    "~/" + "d" * 254 + "/" + "/".join(["d" * 254] * 15) + "/ff",  # > PATH_MAX with the home
    "~/ok/" + "\u00e9" * 150,  # 300 bytes in UTF-8, 150 characters
])
def test_over_long_name_is_a_coded_refusal(user_daemon: RunningDaemon, target: str) -> None:
    """A name the kernel refuses: the live path refuses its backup (BACKUP_REFUSED); a
    captured step meets the kernel's own refusal and fails with nothing landed."""
    client = user_daemon.client()
    before = sorted(p.name for p in user_daemon.home.iterdir())
    plan_id, events = run(client, make_plan([("w", f"echo x > {target}", "HIGH")]), high=True)
    finished = [e for e in events if e.type == "step_finished"]
    assert finished[-1].status == "failed", finished
    assert finished[-1].code in ("BACKUP_REFUSED", "EXECUTION_FAILED"), finished
    assert "more than the system allows" in (finished[-1].message or "") or \
        "too long" in (finished[-1].output or "") or "No such file" in (finished[-1].output or "")
    assert events[-1].status == "failed"
    assert client.get_plan(plan_id).status == "failed"
    assert sorted(p.name for p in user_daemon.home.iterdir()) == before


# --------------------------------------------------------------------------- seed 000


SEED = ("cp ~/.config/hypr/hyprpaper.conf "
        "~/.config/hypr/hyprpaper.conf.anna_backup.$(date +%Y%m%d_%H%M%S)")
WALL = "cp ~/.config/x/wall.png ~/.config/x/wall.png.anna_backup.$(date +%s)"


@pytest.mark.parametrize("command", [
    SEED, WALL,
    "cp ~/.config/x/wall.png ~/.config/x/wall.png.anna_backup.`date +%s`",
    'cp ~/.config/x/wall.png ~/".config/x/wall.png.bak.$(date +%F)"',
    "cp ~/a ~/.config/x/'saved '$(date -u +%Y%m%dT%H%M%S)",
    "mkdir ~/snapshots-$(date +%F)",
    "touch ~/.cache/stamp.$(date +%s)",
])
def test_run_time_named_new_entry_in_a_known_directory_is_low(command: str) -> None:
    verdict = assess(command)
    assert verdict.risk.value == "LOW", (command, verdict.reasons)
    assert "UNKNOWN_TARGET" not in verdict.codes


@pytest.mark.parametrize("command", [
    "cp ~/a ~/b.$(date)",               # spaces: splits into several arguments
    "cp ~/a ~/b.$(date +%D)",           # slashes: climbs into directories
    "cp ~/a ~/b.$(date +%Y/%m)",
    "cp ~/a ~/b.$(date -s +%s)",        # sets the clock
    "cp ~/a ~/b.$(date -d @0 +%s)",
    "cp ~/a ~/b.$(cat ~/name)",         # reads a file the person controls
    "cp ~/a ~/b.$(date +%s; rm -rf ~/x)",
    "cp ~/a ~/$(date +%s)/x",           # a computed directory
    "cp ~/a ~/{x,y}.$(date +%s)",
    "cp ~/a ~/b.$(date +%s)*",
    "rm ~/b.$(date +%s)",               # not a creation
    "mv ~/a ~/b.$(date +%s)",
    "cp ~/a ~/b.$(echo ../../etc/x)",
    "cp ~/a ~/b.<(date +%s)",
    "cp ~/a ~/b.$((1+2))$(date +%s)",
])
def test_other_run_time_targets_stay_high(command: str) -> None:
    verdict = assess(command)
    assert verdict.risk.value == "HIGH", (command, verdict.reasons)


def test_seed_wallpaper_backup_runs_at_low_and_rollback_removes_only_it(
        user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    folder = user_daemon.home / ".config" / "x"
    folder.mkdir(parents=True)
    (folder / "wall.png").write_bytes(b"\x89PNG wallpaper\n")
    (folder / "older.anna_backup.1").write_text("an older backup\n")
    plan = make_plan([("backup", WALL, "LOW")])
    submitted = client.submit(ActionPlan.model_validate(plan))
    assert submitted.annotated.final_risk == "LOW"
    events = list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                 high_confirmed=False))
    assert events[-1].status == "succeeded", events[-1]
    created = [p.name for p in folder.iterdir() if re.fullmatch(r"wall\.png\.anna_backup\.\d+",
                                                                p.name)]
    assert len(created) == 1
    assert (folder / created[0]).read_bytes() == b"\x89PNG wallpaper\n"
    (folder / "after.txt").write_text("made by the person after the plan\n")
    result = client.rollback(submitted.plan_id)
    assert result.status == "rolled_back", result.undo
    assert undo_of(result) == [("backup", "delete", True)]
    assert sorted(p.name for p in folder.iterdir()) == ["after.txt", "older.anna_backup.1",
                                                       "wall.png"]
    assert (folder / "wall.png").read_bytes() == b"\x89PNG wallpaper\n"


def test_seed_exact_example_and_an_edited_copy_is_kept(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    hypr = user_daemon.home / ".config" / "hypr"
    hypr.mkdir(parents=True)
    (hypr / "hyprpaper.conf").write_text("preload = ~/a.png\n")
    plan_id, events = run(client, make_plan([("backup", SEED, "LOW")]))
    assert events[-1].status == "succeeded", events[-1]
    copy = next(hypr.glob("hyprpaper.conf.anna_backup.*"))
    copy.write_text("the person edited the backup copy\n")
    result = client.rollback(plan_id)
    assert result.status == "rollback_failed"
    assert undo_of(result) == [("backup", "conflict", False)]
    assert copy.read_text() == "the person edited the backup copy\n"


def test_write_with_a_run_time_name_is_observed_and_undone(user_daemon: RunningDaemon) -> None:
    """A name only known when the step runs was refused while backups were predicted; it
    is observed now: the real file lands and the rollback removes exactly it."""
    client = user_daemon.client()
    folder = user_daemon.home / ".config" / "x"
    folder.mkdir(parents=True)
    plan_id, events = run(client, make_plan([("w", "echo x > ~/.config/x/f.$(date +%s)",
                                              "HIGH")]), high=True)
    assert events[-1].status == "succeeded", events[-1]
    assert [p.read_text() for p in folder.iterdir()] == ["x\n"]
    result = client.rollback(plan_id)
    assert result.status == "rolled_back", result.undo
    assert list(folder.iterdir()) == []


def test_system_daemon_runs_the_seed_example_too(system_daemon: RunningDaemon) -> None:
    client = system_daemon.client()
    folder = system_daemon.home / ".config" / "x"
    folder.mkdir(parents=True)
    (folder / "wall.png").write_bytes(b"png\n")
    plan_id, events = run(client, make_plan([("backup", WALL, "LOW")]))
    assert events[-1].status == "succeeded", events[-1]
    assert len(list(folder.iterdir())) == 2
    assert client.rollback(plan_id).status == "rolled_back"
    assert [p.name for p in folder.iterdir()] == ["wall.png"]


# --------------------------------------------------------------------------- issue 9, item 4


def test_big_file_is_backed_up_and_restored_in_bounded_memory() -> None:
    """A 96 MiB file: the daemon's peak RSS grows by far less than the file (it streams)."""
    from bench.bigfile import big_file

    figures = big_file(96)
    assert figures["backup"] - figures["idle"] < 40, figures
    assert figures["restore"] - figures["idle"] < 40, figures


# --------------------------------------------------------------------------- issue 9, item 2


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A real tmpfs of ``size`` at ``path`` (skips when this machine cannot mount one)."""
    path.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755",
                           "anna-test", str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill_up(path: Path) -> None:
    """Write until the file system is full (another program filling the disk)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"\xaa" * 65536)
    finally:
        os.close(fd)


def test_full_target_disk_restores_in_place_after_the_smaller_files(
        executor: tuple[Executor, Journal, Path]) -> None:
    """The live path (no capture): a file whose temporary copy does not fit is restored in
    place, after the smaller ones freed room."""
    ex, journal, home = executor
    with small_tmpfs(home / "vol", "4m") as vol:
        original = os.urandom(3 * 1024 * 1024)
        (vol / "big.bin").write_bytes(original)
        steps = [StepSpec(index=0, step_id="grow", command="seq 1 90000 > ~/vol/pad.bin && "
                          "printf x >> ~/vol/big.bin", scope="user")]
        _plan(journal, "p9", home, steps)
        events: list[ExecEvent] = []
        assert ex.run("p9", steps, _who(home), events.append, threading.Event()) is \
            PlanStatus.SUCCEEDED
        results = ex.undo("p9", [0], events.append)
        assert [(u.action, Path(u.target).name) for u in results] == [
            ("delete", "pad.bin"), ("restore", "big.bin")], results
        assert all(u.ok for u in results)
        assert "in place" in results[-1].message
        assert (vol / "big.bin").read_bytes() == original
        assert sorted(p.name for p in vol.iterdir()) == ["big.bin"]  # no temporary leftover


def test_full_target_disk_refuses_the_commit_and_leaves_no_torn_file() -> None:
    """A captured step whose change set cannot land on a full target disk: the step fails,
    what landed of it is undone, every file is whole (the old bytes), nothing is left over."""
    with running_daemon(user_mode=True) as daemon, \
            small_tmpfs(daemon.home / "vol", "4m") as vol:
        original = os.urandom(3 * 1024 * 1024)
        (vol / "big.bin").write_bytes(original)
        (vol / "small.txt").write_text("small\n")
        client = daemon.client()
        plan_id, events = run(client, make_plan([
            ("grow", "echo changed > ~/vol/small.txt && seq 1 90000 > ~/vol/pad.bin && "
                     "printf x >> ~/vol/big.bin", "LOW")]))
        assert events[-1].status == "failed", events[-1]
        assert "could not land" in (events[-1].message or ""), events[-1]
        assert (vol / "big.bin").read_bytes() == original
        assert (vol / "small.txt").read_text() == "small\n"
        assert sorted(p.name for p in vol.iterdir()) == ["big.bin", "small.txt"]
        assert client.get_plan(plan_id).status == "failed"


def test_full_target_disk_that_cannot_fit_leaves_the_file_and_says_so() -> None:
    with running_daemon(user_mode=True) as daemon, \
            small_tmpfs(daemon.home / "vol", "4m") as vol:
        original = os.urandom(3 * 1024 * 1024)
        (vol / "big.bin").write_bytes(original)
        client = daemon.client()
        plan_id, _ = run(client, make_plan([("empty", "truncate -s 0 ~/vol/big.bin", "LOW")]))
        _fill_up(vol / "other.bin")  # someone else takes the room meanwhile
        other = (vol / "other.bin").read_bytes()
        first = client.rollback(plan_id)
        assert first.status == "rollback_failed"
        assert [(u.action, u.ok) for u in first.undo] == [("restore", False)]
        assert f"needs {len(original)} bytes" in first.undo[0].message
        assert (vol / "big.bin").stat().st_size == 0  # left as it is, not half written
        assert (vol / "other.bin").read_bytes() == other
        (vol / "other.bin").unlink()
        second = client.rollback(plan_id)
        assert second.status == "rolled_back", second.undo
        assert (vol / "big.bin").read_bytes() == original


# --------------------------------------------------------------------------- issue 9, item 3


def _big(daemon: RunningDaemon, mib: int = 128) -> tuple[Path, bytes]:
    path = daemon.home / "big.bin"
    data = os.urandom(1024 * 1024) * mib
    path.write_bytes(data)
    return path, data


def _kill_when(daemon: RunningDaemon, appeared: Any, action: Any) -> None:
    """Run ``action`` in a thread and SIGKILL the daemon as soon as ``appeared()`` holds."""
    worker = threading.Thread(target=_quietly, args=(action,))
    worker.start()
    deadline = time.monotonic() + 60
    while not appeared():
        assert worker.is_alive(), "the operation finished before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.001)
    daemon.kill()
    worker.join(timeout=WAIT_S)


def _quietly(action: Any) -> None:
    with contextlib.suppress(Exception):  # the daemon dies under the request: expected
        action()


def test_kill_9_during_a_backup_leaves_no_partial_blob() -> None:
    with running_daemon(user_mode=True,
                        env={"ANNAD_BACKUP_MAX_BYTES": str(512 * 1024 * 1024)}) as daemon:
        path, data = _big(daemon)
        client = daemon.client()
        submitted = client.submit(ActionPlan.model_validate(
            make_plan([("empty", "truncate -s 0 ~/big.bin", "LOW")])))
        _kill_when(daemon, lambda: any(daemon.state.glob("backups/*/blobs/.incoming-*")),
                   lambda: list(client.execute(submitted.plan_id, submitted.digest,
                                               confirmed=True, high_confirmed=False)))
        assert list(daemon.state.glob("backups/*/blobs/.incoming-*"))  # the dead one's
        daemon.start()
        assert not list(daemon.state.glob("backups/*/blobs/.incoming-*"))
        assert daemon.client().get_plan(submitted.plan_id).status == "interrupted"
        assert path.read_bytes() == data  # the step never ran


def test_kill_9_during_a_restore_leaves_no_copy_beside_the_file() -> None:
    with running_daemon(user_mode=True,
                        env={"ANNAD_BACKUP_MAX_BYTES": str(512 * 1024 * 1024)}) as daemon:
        path, data = _big(daemon)
        decoys = [daemon.home / ".big.bin.anna-restore-x", daemon.home / ".other.anna-restore-1",
                  daemon.home / "big.bin.anna-restore-1"]
        for decoy in decoys:
            decoy.write_text("not Anna's\n")
        client = daemon.client()
        plan_id, events = run(client, make_plan([("empty", "truncate -s 0 ~/big.bin", "LOW")]))
        assert events[-1].status == "succeeded"

        def copies() -> list[Path]:
            return [p for p in daemon.home.glob(".big.bin.anna-restore-*")
                    if p.name.rpartition("-")[2].isdigit()]

        _kill_when(daemon, copies, lambda: client.rollback(plan_id))
        assert copies() and path.stat().st_size == 0  # killed before the rename
        daemon.start()
        assert copies() == []
        assert all(decoy.read_text() == "not Anna's\n" for decoy in decoys)
        client = daemon.client()
        assert client.get_plan(plan_id).status == "interrupted"
        result = client.rollback(plan_id)
        assert result.status == "rolled_back", result.undo
        assert path.read_bytes() == data


def test_steps_with_nothing_to_undo_leave_no_backup_directory(user_daemon: RunningDaemon
                                                              ) -> None:
    client = user_daemon.client()
    quiet_id, events = run(client, make_plan([("a", "echo hello", "INFO"),
                                              ("b", "uname -r", "INFO")]))
    assert events[-1].status == "succeeded"
    assert not (user_daemon.state / "backups" / quiet_id).exists()
    write_id, _ = run(client, make_plan([("a", "echo hello", "INFO"),
                                         ("w", "echo x > ~/w.txt", "LOW")]))
    # only the step that writes has a directory (its file was absent: no blob either)
    assert [p.name for p in (user_daemon.state / "backups" / write_id).iterdir()] == ["001"]


def test_run_time_name_that_hit_an_existing_file_is_restored(
        user_daemon: RunningDaemon) -> None:
    """``cp a w.$(date +%Y)`` over a file that existed: the prediction could not back it up;
    the observed change is that file, so its original is saved and put back."""
    client = user_daemon.client()
    folder = user_daemon.home / ".config" / "x"
    folder.mkdir(parents=True)
    (folder / "a").write_text("new\n")
    year = time.strftime("%Y")
    (folder / f"w.{year}").write_text("old\n")
    plan_id, events = run(client, make_plan([("cp", "cp ~/.config/x/a ~/.config/x/w.$(date +%Y)",
                                              "LOW")]))
    assert events[-1].status == "succeeded", events[-1]
    if time.strftime("%Y") != year:
        pytest.skip("the year changed during the test")
    assert (folder / f"w.{year}").read_text() == "new\n"
    result = client.rollback(plan_id)
    assert result.status == "rolled_back", result.undo
    assert [(u.action, u.ok, Path(u.target).name) for u in result.undo] == [
        ("restore", True, f"w.{year}")]
    assert (folder / f"w.{year}").read_text() == "old\n"
    assert sorted(p.name for p in folder.iterdir()) == ["a", f"w.{year}"]


def test_rollback_resumed_in_a_new_call_does_not_take_annas_own_restore_for_a_conflict(
        executor: tuple[Executor, Journal, Path]) -> None:
    """A rollback stopped between two steps and resumed later (a new undo call, nothing
    remembered) finds a file Anna itself restored under a new inode: the bytes and metadata
    are what the earlier step left, so it is not a conflict; a person's edit still is."""
    ex, journal, home = executor
    conf = home / "app.conf"
    conf.write_bytes(b"a=1\nb=2\n")
    steps = [StepSpec(index=0, step_id="one", command="sed -i s/a=1/a=5/ ~/app.conf",
                      scope="user"),
             StepSpec(index=1, step_id="two", command="sed -i s/b=2/b=7/ ~/app.conf",
                      scope="user")]
    for plan_id, edit in (("resumed", False), ("edited", True)):
        conf.write_bytes(b"a=1\nb=2\n")
        _plan(journal, plan_id, home, steps)
        events: list[ExecEvent] = []
        assert ex.run(plan_id, steps, _who(home), events.append, threading.Event()) is \
            PlanStatus.SUCCEEDED
        assert all(r.ok for r in ex.undo(plan_id, [1], events.append))
        assert conf.read_bytes() == b"a=5\nb=2\n"
        if edit:
            conf.write_bytes(b"a=5\nb=2\n# the person's own line\n")
        results = ex.undo(plan_id, [0], events.append)  # a new call: a resumed rollback
        if edit:
            assert [(r.action, r.ok) for r in results] == [("conflict", False)]
            assert conf.read_bytes() == b"a=5\nb=2\n# the person's own line\n"
        else:
            assert all(r.ok for r in results), results
            assert conf.read_bytes() == b"a=1\nb=2\n"
