"""Previews: file steps over a throw-away overlay, pacman --print, systemctl --root, validators.

Every plan here works on a scratch tree under a temporary directory (the "real tree" of the
tests); each test hashes that tree before and after and proves the preview left it as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from anna_common.plan import RiskLevel
from anna_common.protocol.models import SessionEnv
from anna_common.protocol.preview import PlanPreview
from anna_common.risk.rules.base import AssessContext
from anna_common.validate import validate
from annad.journal.records import who_of
from annad.preview import engine, overlay
from tests.daemonfix import make_plan

if TYPE_CHECKING:
    from collections.abc import Iterator

    from anna_common.findings import AnnotatedPlan

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces and overlays as root")


def tree_hash(root: Path) -> str:
    """Names, types, modes, owners, link targets and contents of everything below ``root``."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        digest.update(os.fsencode(path.relative_to(root)))
        digest.update(f"|{info.st_mode:o}|{info.st_uid}|{info.st_gid}|".encode())
        if path.is_symlink():
            digest.update(os.fsencode(path.readlink()))
        elif path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def annotated(steps: list[tuple[str, str, str]], home: str = "/root") -> AnnotatedPlan:
    """The daemon's annotation of a plan made of ``steps``."""
    result = validate(make_plan(steps), AssessContext(distro="arch", home=home))
    assert result.plan is not None, result.errors
    return result.plan


def preview_of(plan: AnnotatedPlan, **options: object) -> PlanPreview:
    """The preview as the system daemon (root) makes it."""
    return engine.compute(plan, who_of(0, "/root", SessionEnv()), engine.Options(**options))  # type: ignore[arg-type]


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A small "real tree": an sshd_config, a file to delete, a directory, a binary file."""
    root = tmp_path / "real"
    (root / "etc/ssh").mkdir(parents=True)
    (root / "etc/ssh/sshd_config").write_text("Port 22\n#PermitRootLogin yes\nUsePAM yes\n")
    (root / "old.txt").write_text("bye\n")
    (root / "dir/sub").mkdir(parents=True)
    (root / "dir/sub/f").write_text("f\n")
    (root / "blob").write_bytes(b"\0\1\2" * 10)
    return root


def test_sed_edit_shows_a_unified_diff_and_leaves_the_file(scratch: Path) -> None:
    cfg = scratch / "etc/ssh/sshd_config"
    before = tree_hash(scratch)
    plan = annotated([("s1", f"sed -i 's/^#\\?PermitRootLogin.*/PermitRootLogin no/' {cfg}",
                       "MEDIUM")])
    preview = preview_of(plan)
    step = preview.steps[0]
    assert step.kind == "files", step.reason
    assert [(f.path, f.change) for f in step.files] == [(str(cfg), "modified")]
    diff = step.files[0].diff or ""
    assert "-#PermitRootLogin yes" in diff and "+PermitRootLogin no" in diff
    assert step.files[0].mode_before == step.files[0].mode_after == "0644"
    assert tree_hash(scratch) == before


WRITE_FORMS = [
    ("redirect", "echo one > {r}/new1"),
    ("append", "echo more >> {r}/old.txt"),
    ("stderr-redirect", "ls /nonexistent-anna 2> {r}/err.log; true"),
    ("both-redirect", "echo x &> {r}/both.log"),
    ("sed-i", "sed -i 's/bye/hello/' {r}/old.txt"),
    ("tee", "echo t | tee {r}/tee.txt"),
    ("tee-a", "echo t | tee -a {r}/old.txt"),
    ("sudo-tee", "echo s | sudo tee {r}/sudo.txt"),
    ("cp", "cp {r}/old.txt {r}/copy.txt"),
    ("cp-r", "cp -r {r}/dir {r}/dir2"),
    ("mv", "mv {r}/old.txt {r}/moved.txt"),
    ("ln", "ln -s /etc/hostname {r}/link"),
    ("rm", "rm {r}/old.txt"),
    ("rm-r", "rm -r {r}/dir"),
    ("mkdir", "mkdir -p {r}/a/b/c"),
    ("chmod", "chmod 600 {r}/old.txt"),
    ("chown", "chown nobody {r}/old.txt"),
    ("truncate", "truncate -s 0 {r}/old.txt"),
    ("install", "install -m 0640 {r}/old.txt {r}/installed.txt"),
    ("touch", "touch {r}/touched"),
    ("bash-c", "bash -c 'echo inner > {r}/inner.txt'"),
    ("binary", "printf '\\001' >> {r}/blob"),
]


@pytest.mark.parametrize(("name", "template"), WRITE_FORMS, ids=[w[0] for w in WRITE_FORMS])
def test_every_write_form_is_previewed_and_never_reaches_the_real_tree(
        scratch: Path, name: str, template: str) -> None:
    before = tree_hash(scratch)
    plan = annotated([("s1", template.format(r=scratch), "MEDIUM")])
    step = preview_of(plan).steps[0]
    assert tree_hash(scratch) == before, f"{name} changed the real tree"
    assert step.kind == "files", step.reason
    assert step.reason is None, step.reason
    assert step.files, f"{name}: no change seen"


def test_all_write_forms_in_one_plan_run_in_order(scratch: Path) -> None:
    before = tree_hash(scratch)
    steps = [(f"s{i}", template.format(r=scratch), "MEDIUM")
             for i, (_, template) in enumerate(WRITE_FORMS[:8])]
    steps.append(("last", f"cat {scratch}/new1 > {scratch}/from-step-1", "MEDIUM"))
    preview = preview_of(annotated(steps))
    assert tree_hash(scratch) == before
    last = preview.steps[-1]
    assert last.reason is None, last.reason
    assert "+one" in (last.files[0].diff or ""), "a later step sees an earlier step's file"


def test_a_write_anna_did_not_foresee_is_shown(scratch: Path, tmp_path: Path) -> None:
    """awk builds the file name at run time: no analysis predicts it, the overlay of the
    whole writable tree shows it (and the real tree stays as it was)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = tree_hash(tmp_path)
    command = (f"echo x > {scratch}/ok; awk 'BEGIN {{ f = \"{elsewhere}\" \"/sneaky\"; "
               "print 1 > f }'")
    step = preview_of(annotated([("s1", command, "MEDIUM")])).steps[0]
    assert tree_hash(tmp_path) == before
    assert not (elsewhere / "sneaky").exists()
    assert step.reason is None, step.reason
    shown = {f.path: f for f in step.files}
    assert {str(scratch / "ok"), str(elsewhere / "sneaky")} <= set(shown), shown
    assert shown[str(elsewhere / "sneaky")].diff is not None
    assert "+1" in (shown[str(elsewhere / "sneaky")].diff or "")


def test_caps_show_more_lines(scratch: Path) -> None:
    big = scratch / "big.conf"
    big.write_text("".join(f"line {i}\n" for i in range(500)))
    preview = preview_of(annotated([("s1", f"sed -i 's/line/LINE/' {big}", "MEDIUM")]))
    change = preview.steps[0].files[0]
    assert change.more_lines > 0
    assert change.diff is not None and change.diff.count("\n") < 200


def test_binary_file_gets_sizes_not_a_diff(scratch: Path) -> None:
    preview = preview_of(annotated([("s1", f"printf '\\001' >> {scratch}/blob", "MEDIUM")]))
    change = preview.steps[0].files[0]
    assert change.diff is None
    assert (change.size_before, change.size_after) == (30, 31)


def test_chown_and_chmod_show_owner_and_mode(scratch: Path) -> None:
    target = scratch / "old.txt"
    preview = preview_of(annotated([("s1", f"chown nobody {target} && chmod 600 {target}",
                                     "MEDIUM")]))
    change = preview.steps[0].files[0]
    assert change.mode_before == "0644" and change.mode_after == "0600"
    assert change.owner_after is not None and change.owner_after.startswith("nobody:")


def test_steps_that_cannot_be_previewed_say_why() -> None:
    preview = preview_of(annotated([("s1", "curl -o /tmp/x https://example.org", "MEDIUM"),
                                    ("s2", "pkill -HUP nginx", "MEDIUM")]))
    assert [s.kind for s in preview.steps] == ["none", "none"]
    assert "network" in (preview.steps[0].reason or "")
    assert "signals" in (preview.steps[1].reason or "")


# --------------------------------------------------------------------------- validators


def test_failing_validator_raises_the_step_to_high(scratch: Path) -> None:
    rc = scratch / ".bashrc"
    rc.write_text("alias ll='ls -l'\n")
    plan = annotated([("s1", f"echo 'if then fi (' >> {rc}", "LOW")])
    assert plan.steps[0].final_risk < RiskLevel.HIGH
    preview = preview_of(plan)
    [verdict] = preview.steps[0].validators
    assert (verdict.name, verdict.verdict) == ("bash -n", "failed")
    assert "syntax error" in verdict.output and str(rc) in verdict.output
    raised, warnings = engine.raise_failed(plan, preview)
    assert raised.steps[0].final_risk == RiskLevel.HIGH
    assert raised.final_risk == RiskLevel.HIGH and raised.confirmations == 2
    assert "bash -n fails" in raised.steps[0].reasons[0]
    assert warnings and warnings[0].path == "command_plan[0].command"
    assert rc.read_text() == "alias ll='ls -l'\n"


def test_passing_validator_changes_nothing(scratch: Path) -> None:
    rc = scratch / ".bashrc"
    rc.write_text("alias ll='ls -l'\n")
    plan = annotated([("s1", f"echo 'export A=1' >> {rc}", "LOW")])
    preview = preview_of(plan)
    assert [v.verdict for v in preview.steps[0].validators] == ["ok"]
    raised, warnings = engine.raise_failed(plan, preview)
    assert raised == plan and warnings == []


@pytest.mark.skipif(shutil.which("findmnt") is None, reason="findmnt is not installed")
def test_fstab_is_verified_on_the_previewed_copy(scratch: Path) -> None:
    fstab = scratch / "etc/fstab"
    fstab.write_text("tmpfs /mnt/anna-x tmpfs defaults 0 0\n")
    preview = preview_of(annotated([("s1", f"echo 'garbage-line-without-fields' >> {fstab}",
                                     "MEDIUM")]))
    [verdict] = preview.steps[0].validators
    assert verdict.name == "findmnt --verify" and verdict.verdict == "failed", verdict


def test_a_missing_validator_is_not_checked(scratch: Path) -> None:
    cfg = scratch / "etc/ssh/sshd_config"
    preview = preview_of(annotated([("s1", f"echo 'PermitRootLogin no' >> {cfg}", "MEDIUM")]),
                         validator_path=(str(scratch / "no-such-dir"),))
    [verdict] = preview.steps[0].validators
    if shutil.which("sshd", path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"):
        assert verdict.verdict in ("ok", "failed")
    else:
        assert (verdict.verdict, verdict.output) == ("not checked", "sshd is not installed")


SSHD = shutil.which("sshd", path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")


@pytest.mark.skipif(SSHD is None, reason="sshd is not installed (.ci/run installs openssh-server)")
def test_sshd_rejects_the_previewed_typo_and_the_step_goes_high(scratch: Path) -> None:
    cfg = scratch / "etc/ssh/sshd_config"
    plan = annotated([("s1", f"sed -i 's/^#PermitRootLogin.*/PermitRootLogin nope/' {cfg}",
                       "MEDIUM")])
    preview = preview_of(plan)
    [verdict] = preview.steps[0].validators
    assert (verdict.name, verdict.verdict) == ("sshd -t", "failed"), verdict
    assert "nope" in verdict.output
    raised, _ = engine.raise_failed(plan, preview)
    assert raised.steps[0].final_risk == RiskLevel.HIGH
    assert "#PermitRootLogin yes" in cfg.read_text()


# --------------------------------------------------------------------------- systemd


@pytest.mark.skipif(shutil.which("systemctl") is None, reason="systemctl is not installed")
def test_systemctl_enable_preview_on_a_scratch_root(tmp_path: Path) -> None:
    root = tmp_path / "sysroot"
    units = root / "usr/lib/systemd/system"
    units.mkdir(parents=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    (units / "anna-demo.service").write_text(
        "[Unit]\nDescription=demo\n[Service]\nExecStart=/bin/true\n"
        "[Install]\nWantedBy=multi-user.target\n")
    before = tree_hash(root)
    preview = preview_of(annotated([("s1", f"systemctl --root={root} enable anna-demo.service",
                                     "MEDIUM")]))
    step = preview.steps[0]
    assert step.kind == "units", step.reason
    [unit] = step.units
    assert unit.unit == "anna-demo.service"
    assert unit.before.startswith("disabled") and unit.after.startswith("enabled"), unit
    wants = root / "etc/systemd/system/multi-user.target.wants/anna-demo.service"
    assert [f.path for f in step.files if f.change == "created"][-1] == str(wants)
    assert step.validators == [], "a .wants/ symlink is not a unit file to verify"
    assert tree_hash(root) == before


def test_systemctl_start_uses_the_verb() -> None:
    preview = preview_of(annotated([("s1", "systemctl start anna-nonexistent.service", "MEDIUM")]))
    [unit] = preview.steps[0].units
    assert unit.after.endswith("active") and not unit.after.endswith("inactive")


# --------------------------------------------------------------------------- the wall


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory everyone may enter (so only the confinement can stop a connect)."""
    base = Path(tempfile.mkdtemp(prefix="anna-preview-wall-"))
    base.chmod(0o755)
    (base / "w").mkdir(mode=0o777)
    (base / "w").chmod(0o777)
    try:
        yield base
    finally:
        shutil.rmtree(base)


@pytest.mark.parametrize("system", [True, False], ids=["root-step", "owner-step"])
def test_previewed_steps_reach_no_unix_socket_and_no_run(open_dir: Path, system: bool) -> None:
    sock_path = open_dir / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    sock_path.chmod(0o777)
    server.listen()
    server.setblocking(False)
    probe = open_dir / "probe.py"
    probe.write_text("import socket, sys\ntry:\n    socket.socket(socket.AF_UNIX).connect(sys.argv[1])\n"
                     "    print('CONNECTED')\nexcept OSError as exc:\n    print('refused', exc)\n")
    command = (f"python3 {probe} {sock_path}; echo run: $(ls -A /run); "
               f"echo done > {open_dir}/w/out")
    who = who_of(0 if system else 65534, str(open_dir / "w"), SessionEnv())
    run = overlay.run([overlay.FileStep(0, command, system)], who, limits=overlay.Limits())
    try:
        assert run.error is None, run.error
        result = run.steps[0]
        assert "refused" in result.output and "CONNECTED" not in result.output, result.output
        assert result.output.splitlines()[1].strip() == "run: sshd", "the host's /run is hidden"
        with pytest.raises(BlockingIOError):
            server.accept()
        assert not (open_dir / "w/out").exists()
    finally:
        server.close()


def test_an_owners_preview_runs_beside_a_mount_it_cannot_reach(open_dir: Path) -> None:
    """A writable file system mounted beneath a directory only root may enter (as the fault
    tests mount a daemon's state disk, or /root/… on a real machine) is among the machine's
    mounts an overlay covers; the owner's step cannot reach it, and it must still run (the
    suite saw 'landlock rule for …/state: Permission denied' while such a mount existed)."""
    from tests.daemon.test_faults import tmpfs

    closed = Path(tempfile.mkdtemp(prefix="anna-preview-closed-"))  # 0700 root
    try:
        with tmpfs(closed / "disk"):
            who = who_of(65534, str(open_dir / "w"), SessionEnv())
            run = overlay.run([overlay.FileStep(0, f"echo hi > {open_dir}/w/out", False)], who,
                              limits=overlay.Limits())
            assert run.error is None, run.error
            assert run.steps[0].exit_code == 0, run.steps[0].output
            written = [e for e in run.steps[0].entries if str(e["rel"]).endswith("w/out")]
            assert [e["data"] for e in written] == ["aGkK"]  # "hi\n": it ran and wrote
    finally:
        shutil.rmtree(closed)


def test_a_writable_tree_gone_before_its_rule_gets_none_and_grants_nothing(
        tmp_path: Path) -> None:
    """A mount listed for the walls and unmounted before its Landlock rule (another
    program's scratch tmpfs going away beside a preview: seen in a suite run in a pair) gets
    no rule, and the run goes on: a rule only grants. What the domain allows is unchanged —
    the tree that exists is writable, everything else is not, and a directory made later
    where the vanished one was is not writable either."""
    from annad.confine import landlock

    kept, gone, elsewhere = tmp_path / "kept", tmp_path / "gone", tmp_path / "elsewhere"
    kept.mkdir()
    elsewhere.mkdir()
    pid = os.fork()
    if pid == 0:  # the child: enter the domain, try each write, report by exit status
        status = 1
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
            landlock.restrict((), (str(kept), str(gone)))
            (kept / "ok").write_text("x")
            denied = 0
            for target in (elsewhere / "no", tmp_path / "no"):
                try:
                    target.write_text("x")
                except PermissionError:
                    denied += 1
            try:
                gone.mkdir()
                (gone / "no").write_text("x")
            except PermissionError:
                denied += 1
            status = 0 if denied == 3 else 2
        finally:
            os._exit(status)
    _pid, wait_status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(wait_status) == 0, wait_status
    assert (kept / "ok").read_text() == "x"
    assert not (elsewhere / "no").exists() and not (tmp_path / "no").exists()
    assert not (gone / "no").exists()


def test_names_that_are_not_utf8_are_shown_escaped(scratch: Path) -> None:
    raw = os.fsencode(scratch) + b"/caf\xe9.txt"
    with open(raw, "wb") as handle:
        handle.write(b"precious\n")
    before = tree_hash(scratch)
    preview = preview_of(annotated([("s1", f"rm {scratch}/*.txt", "HIGH")]))
    paths = [f.path for f in preview.steps[0].files]
    assert f"{scratch}/caf\\xe9.txt" in paths, preview.steps[0]
    preview.model_dump_json()  # the journal and the wire hold it as text
    assert tree_hash(scratch) == before


def test_a_symlink_swapped_in_by_a_user_step_is_never_read_through(tmp_path: Path) -> None:
    """A user-scope step replaces ``~/a`` (a symlink to a root-only directory) by a directory
    and writes ``~/a/secret``: the "before" side must not be the root-only file behind the
    old symlink, read with the daemon's rights."""
    secret_dir = tmp_path / "rootonly"
    secret_dir.mkdir(mode=0o700)
    (secret_dir / "secret").write_text("TOP-SECRET\n")
    home = Path(tempfile.mkdtemp(prefix="anna-preview-home-"))
    try:
        os.chown(home, 65534, 65534)
        (home / "a").symlink_to(secret_dir)
        os.lchown(home / "a", 65534, 65534)
        who = who_of(65534, str(home), SessionEnv())
        plan = annotated([("s1", f"rm {home}/a && mkdir {home}/a && echo new > {home}/a/secret",
                           "LOW")], home=str(home))
        preview = engine.compute(plan, who, engine.Options())
        text = preview.model_dump_json()
        assert "TOP-SECRET" not in text
        assert (home / "a").is_symlink()
    finally:
        shutil.rmtree(home)


def test_a_python_write_under_an_aliased_name_is_shown(tmp_path: Path) -> None:
    """``f=open; f(...)``: no write rule knows it; the preview shows the file it made."""
    before = tree_hash(tmp_path)
    command = f"python3 -c \"f=open; f('{tmp_path}/made','w').write('hi')\""
    step = preview_of(annotated([("s1", command, "MEDIUM")])).steps[0]
    assert tree_hash(tmp_path) == before
    assert [f.path for f in step.files] == [str(tmp_path / "made")], step
    assert step.files[0].sha256 == hashlib.sha256(b"hi").hexdigest()


def test_a_read_only_step_needs_no_overlay_run() -> None:
    preview = preview_of(annotated([("s1", "ls -la /etc", "INFO")]))
    assert preview.steps[0].kind == "files" and not preview.steps[0].files
    assert preview.steps[0].reason is None


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")
@pytest.mark.parametrize(("body", "verdict"), [
    ("[Service]\\nExecStart=/bin/true\\n", "ok"),
    ("[Service]\\nExecStart=true-relative\\n", "failed")], ids=["good", "bad"])
def test_unit_files_are_verified(tmp_path: Path, body: str, verdict: str) -> None:
    units = tmp_path / "etc/systemd/system"
    units.mkdir(parents=True)
    preview = preview_of(annotated([("s1", f"printf '{body}' > {units}/anna-demo.service",
                                     "MEDIUM")]))
    [result] = preview.steps[0].validators
    assert (result.name, result.verdict) == ("systemd-analyze verify", verdict), result
    assert not (units / "anna-demo.service").exists()


SYSTEM_PYTHON = "/usr/bin/python3"
_USERNS_DRIVER = """
import json, os, sys, tempfile
sys.path.insert(0, sys.argv[1])
from annad.confine.runner import run_overlay
from annad.capture.layers import mount_plan
from annad.preview.overlay import below_root
base = tempfile.mkdtemp(prefix="anna-preview-userns-")
os.makedirs(base + "/d/sub")
open(base + "/d/sub/f", "w").write("old\\n")
open(base + "/d/gone", "w").write("bye\\n")
env = {"PATH": "/usr/bin:/bin", "HOME": base}
command = ("sed -i s/old/new/ {b}/d/sub/f && rm {b}/d/gone && echo x > {b}/d/n; "
           "python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -1").format(b=base)
step = {"uid": os.getuid(), "gid": os.getgid(), "groups": "", "env": env, "cwd": base,
        "command": command, "validate": []}
plan, layers = below_root(*mount_plan(open("/proc/self/mountinfo").read(), "/dev/shm"))
top = max((p for p in layers.values() if (base + "/").startswith(p.rstrip("/") + "/")), key=len)
spec = {"steps": [step], "plan": plan, "userns": True,
        "limits": {"file": 65536, "total": 1 << 20, "entries": 100, "tmpfs": 1 << 24,
                   "output": 4096}}
result, report = run_overlay(json.dumps(spec), timeout=30, max_output=4096,
                             python=sys.executable)
item = json.loads(report.splitlines()[0])
out = {"error": result.error, "output": item["output"],
       "entries": sorted((os.path.relpath(os.path.join(top, e["rel"]), base + "/d"), e["type"])
                  for e in item["entries"]),
       "real": open(base + "/d/sub/f").read(),
       "gone_kept": os.path.exists(base + "/d/gone")}
import shutil
shutil.rmtree(base)  # this uid's scratch tree: nothing left in /tmp
print(json.dumps(out))
"""


def test_per_user_daemon_previews_in_a_user_namespace() -> None:
    """The overlay helper as an unprivileged uid (a per-user daemon): userxattr overlays."""
    probe = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534",
                            "--clear-groups", "unshare", "-Ur", "true"], check=False,
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unprivileged user namespaces are not allowed here: {probe.stderr!r}")
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip("no system python3 an unprivileged uid can run")
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                           SYSTEM_PYTHON, "-c", _USERNS_DRIVER, str(repo)], check=False,
                          capture_output=True, text=True, cwd="/", timeout=90)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["error"] is None
    assert ("sub/f", "f") in map(tuple, out["entries"])
    assert ("gone", "w") in map(tuple, out["entries"]) and ("n", "f") in map(tuple, out["entries"])
    assert "Permission denied" in out["output"], "no Unix socket in a user-namespace preview"
    assert out["real"] == "old\n" and out["gone_kept"]
