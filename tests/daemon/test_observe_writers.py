"""What a step really changed is what Anna judges, backs up and undoes: the writer matrix.

One root daemon, started in a private mount namespace with a copy of /etc bound over /etc
(tests/decoyns.py): every step it runs, and every change a judge might wrongly let through,
reaches only the decoy. Each case is a program or a form Anna cannot predict (an aliased
``open``, ``patch``, ``split``, ``xz``, a nameref, ``~-``, a planted symlink…); each either
lands, is rolled back byte-exact, or is refused before anything landed.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan
from anna_common.protocol.models import ExecEvent
from anna_common.risk import tiers
from annactl.core.daemon_client import DaemonClient
from tests.daemonfix import (
    IS_ROOT,
    RunningDaemon,
    decoy_etc_daemon,
    layers_left,
    make_plan,
    stop_and_remove,
)
from tests.treeprint import fingerprint

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="captured steps need a root daemon")


@pytest.fixture(scope="module")
def decoy() -> Iterator[RunningDaemon]:
    """A system daemon whose /etc is a copy (the real one is out of its reach)."""
    daemon = decoy_etc_daemon()
    try:
        yield daemon.start()
    finally:
        stop_and_remove(daemon)


def run(client: DaemonClient, steps: list[tuple[str, str, str]]) -> tuple[str, list[ExecEvent]]:
    """Submit and execute ``steps``; HIGH ones with the daemon's own word."""
    response = client.submit(ActionPlan.model_validate(make_plan(steps)))
    high = any(risk == "HIGH" for _, _, risk in steps)
    events = list(client.execute(response.plan_id, response.digest, confirmed=True,
                                 high_confirmed=high,
                                 confirm_word=tiers.plan_word(response.annotated) if high
                                 else None))
    return response.plan_id, events




def workdir(daemon: RunningDaemon, name: str) -> Path:
    """A fresh directory for one case, in the daemon's temporary tree."""
    top = daemon.base / "w" / name
    top.mkdir(parents=True)
    (top / "f").write_text("alpha\nbeta\ngamma\n")
    (top / "src").write_text("source text\n")
    (top / "sub").mkdir()
    (top / "sub" / "keep1").write_text("k1\n")
    (top / "sub" / "keep2").write_text("k2\n")
    return top


def applied_and_undone(daemon: RunningDaemon, top: Path, command: str,
                       check: Any = None, risk: str = "HIGH") -> None:
    """The step lands what it really did, then the rollback puts back every byte (approved
    at HIGH: the label does not matter here, what lands is judged by where it lands)."""
    client = daemon.client()
    before = fingerprint(top)
    plan_id, events = run(client, [("s", command, risk)])
    assert events[-1].status == "succeeded", [(e.type, e.message, e.output) for e in events]
    after = fingerprint(top)
    assert after != before, "the step changed nothing"
    if check is not None:
        check(top)
    result = client.rollback(plan_id)
    assert result.status == "rolled_back", result.undo
    assert fingerprint(top) == before
    assert not layers_left(daemon.state), "upper layers were left on the state disk"


CASES: list[tuple[str, str, Any]] = [
    ("python_aliased_open", "python3 -c \"f=open; f('{T}/new','w').write('x')\"",
     lambda t: (t / "new").read_text() == "x"),
    ("perl_open", "perl -e 'my $o = \\&CORE::open; open(my $h, \">\", \"{T}/f\"); print $h 1'",
     None),
    ("awk_system", "awk 'BEGIN {{ system(\"echo hi > {T}/a\") }}'", None),
    ("patch", "printf '%s\\n' '--- f' '+++ f' '@@ -1,3 +1,3 @@' ' alpha' '-beta' '+BETA' "
              "' gamma' > {T}/x.diff && patch {T}/f {T}/x.diff", None),
    ("split", "split -b 4 {T}/src {T}/part_", lambda t: (t / "part_aa").exists()),
    ("xz", "xz {T}/f", lambda t: not (t / "f").exists() and (t / "f.xz").exists()),
    ("gzip", "gzip -9 {T}/src", None),
    ("tar_over_existing", "tar -C {T} -cf {T}/../t.tar f && echo new > {T}/f && "
                          "tar -C {T} -xf {T}/../t.tar && rm {T}/../t.tar && echo x >> {T}/src",
     None),
    ("unzip_over_existing", "cd {T} && zip -q z.zip f && echo changed > f && unzip -oq z.zip",
     None),
    ("install", "install -m 0600 {T}/src {T}/dst", lambda t: (t / "dst").stat().st_mode & 0o777
     == 0o600),
    ("dd", "dd if={T}/src of={T}/f conv=notrunc status=none", None),
    ("sqlite3", "sqlite3 {T}/db 'create table t(x); insert into t values (1)'", None),
    ("git_checkout", "export GIT_AUTHOR_DATE=@1000000000 GIT_COMMITTER_DATE=@1000000000; "
                     "git -C {T} init -q r && cd {T}/r && echo a > a && git add a && "
                     "git -c user.email=a@b -c user.name=a commit -qm a && echo b > a && "
                     "git checkout -- a", None),
    ("ed", "printf '2d\\nw\\nq\\n' | ed -s {T}/f", None),
    ("vim_es", "vim -es -u NONE -c '%s/beta/BETA/' -c 'wq' {T}/f", None),
    ("truncate", "truncate -s 3 {T}/f", lambda t: (t / "f").stat().st_size == 3),
    ("ln_symlink", "ln -sf {T}/src {T}/lnk", None),
    ("hard_link", "ln {T}/src {T}/hard", None),
    ("mv", "mv {T}/src {T}/moved", None),
    ("python_rename", "python3 -c \"import os; r=os.rename; r('{T}/f', '{T}/g')\"", None),
    ("rm_tree", "rm -rf {T}/sub", lambda t: not (t / "sub").exists()),
    ("replace_tree", "rm -rf {T}/sub && mkdir {T}/sub && echo n > {T}/sub/new", None),
    ("chmod", "chmod 600 {T}/f", None),
    ("touch_mtime", "touch -d 2001-01-01 {T}/f", None),
    ("mkfifo", "mkfifo {T}/fifo", None),
    ("tilde_minus", "cd {T}/sub && cd {T} && rm -f ~-/keep1", None),
    ("tilde_plus", "cd {T}/sub && rm -f ~+/keep2", None),
    ("nameref", "declare -n r=T; T={T}/sub/keep1; rm -f \"$r\"", None),
]


@pytest.mark.parametrize(("name", "command", "check"), CASES, ids=[c[0] for c in CASES])
def test_writer_is_captured_applied_and_undone(decoy: RunningDaemon, name: str, command: str,
                                               check: Any) -> None:
    top = workdir(decoy, name)
    applied_and_undone(decoy, top, command.replace("{T}", str(top)), check)


def refused_before_landing(daemon: RunningDaemon, command: str, where: Path,
                           shown: str) -> None:
    """The step ran, its change set was refused: nothing of it reached ``where``."""
    before = fingerprint(where)
    _, events = run(daemon.client(), [("s", command, "LOW")])
    finished = [e for e in events if e.type == "step_finished"]
    assert finished[-1].status == "failed", [(e.type, e.message) for e in events]
    assert finished[-1].code == "OBSERVED_CHANGE_REFUSED", finished[-1].message
    assert shown in (finished[-1].message or ""), finished[-1].message
    assert fingerprint(where) == before
    assert not layers_left(daemon.state)


REFUSED = [
    ("python_aliased_sudoers", "python3 -c \"f=open; f('/etc/sudoers.d/x','w').write("
                               "'u ALL=(ALL) NOPASSWD: ALL')\"", "/etc/sudoers.d/x"),
    # relative to a cd: the prediction judges the absolute paths these tools name
    # (anna_common/risk/namedpaths.py) but not these, which only the capture sees
    ("split_into_sudoers", "cd /etc/sudoers.d && split -b 100 {T}/src a", "/etc/sudoers.d/aa"),
    ("xz_passwd", "cd /etc && xz -k passwd", "/etc/passwd.xz"),
    ("patch_sshd", "printf '%s\\n' '--- a' '+++ b' '@@ -1 +1 @@' '-PermitRootLogin no' "
                   "'+PermitRootLogin yes' > {T}/p.diff && cd /etc/ssh && patch sshd_config "
                   "{T}/p.diff", "/etc/ssh/sshd_config"),
    ("setuid_copy", "cp -p /usr/bin/su {T}/t", "mode 4755"),
]


@pytest.mark.parametrize(("name", "command", "shown"), REFUSED, ids=[c[0] for c in REFUSED])
def test_change_above_the_approval_is_refused_before_it_lands(
        decoy: RunningDaemon, name: str, command: str, shown: str) -> None:
    top = workdir(decoy, name)
    refused_before_landing(decoy, command.replace("{T}", str(top)), decoy.extra["etc"], shown)
    assert not (top / "t").exists() and not (top / "p.diff").exists()


def test_planted_symlink_under_tmp_lands_nowhere(decoy: RunningDaemon) -> None:
    """A link anyone can plant under /tmp turns a temporary write into an /etc one: the
    kernel resolves it in the capture, the judge sees /etc/sudoers.d/zz, and refuses."""
    top = workdir(decoy, "planted")
    (top / "lnk").symlink_to("/etc")
    refused_before_landing(decoy, f"echo 'u ALL=(ALL) NOPASSWD: ALL' | tee {top}/lnk/"
                                  "sudoers.d/zz", decoy.extra["etc"], "/etc/sudoers.d/zz")


def test_nameref_to_home_is_banned_before_it_runs(decoy: RunningDaemon) -> None:
    """``declare -n r=HOME; rm -rf "$r"``: the analysis follows the nameref (issue 21), so
    the plan is banned at submit and never reaches the capture."""
    (decoy.home / "precious").write_text("mine\n")
    with pytest.raises(AnnaError) as caught:
        run(decoy.client(), [("s", 'declare -n r=HOME; rm -rf "$r"', "LOW")])
    assert caught.value.code == ErrorCode.PLAN_BANNED
    assert (decoy.home / "precious").read_text() == "mine\n"


def test_home_deleted_by_python_is_refused_as_observed(decoy: RunningDaemon) -> None:
    """Python deleting ``$HOME`` through a name the analysis cannot see (HIGH, approved with
    the word): the observed deletion is the home itself, refused before it lands."""
    (decoy.home / "precious").write_text("mine\n")
    before = fingerprint(decoy.home)
    code = ("python3 -c \"import os, shutil; d = getattr(shutil, 'rm' + 'tree'); "
            "d(os.environ['HO' + 'ME'])\"")
    _, events = run(decoy.client(), [("s", code, "HIGH")])
    finished = [e for e in events if e.type == "step_finished"]
    assert finished[-1].status == "failed", [(e.type, e.message) for e in events]
    assert finished[-1].code == "OBSERVED_CHANGE_REFUSED", finished[-1].message
    assert str(decoy.home) in (finished[-1].message or "")
    assert fingerprint(decoy.home) == before


def test_state_dir_is_never_a_steps_to_change(decoy: RunningDaemon) -> None:
    top = workdir(decoy, "state")
    refused_before_landing(decoy, f"echo x > {decoy.state}/planted", top,
                           "inside Anna's own state")
    assert not (decoy.state / "planted").exists()


def test_the_real_etc_was_never_reachable(decoy: RunningDaemon) -> None:
    """The decoy is what the daemon saw: a file made there is not in the real /etc."""
    probe = subprocess.run(["ls", "/etc/sudoers.d"], capture_output=True, text=True,
                           check=False)
    assert "zz" not in probe.stdout.split() and "x" not in probe.stdout.split()


def test_a_file_swapped_for_a_link_after_the_preview_is_refused(decoy: RunningDaemon) -> None:
    """The person saw ``cp src out`` make a 7-byte file; before the run ``src`` became a
    link to /etc/shadow. The observed change is not what the preview showed: refused, and
    no copy of the secret is left anywhere."""
    top = workdir(decoy, "swapped")
    (top / "src").write_text("public\n")
    client = decoy.client()
    response = client.submit(ActionPlan.model_validate(make_plan([
        ("cp", f"cp {top}/src {top}/out", "LOW")])))
    preview = client.preview(response.plan_id)
    shown = [f.path for s in preview.steps for f in s.files]
    assert str(top / "out") in shown, preview
    shadow = decoy.extra["etc"] / "shadow"
    shadow.write_text(shadow.read_text() + "annatest:$6$annatestsecret:19000:0:99999:7:::\n")
    (top / "src").unlink()
    (top / "src").symlink_to("/etc/shadow")
    events = list(client.execute(response.plan_id, response.digest, confirmed=True,
                                 high_confirmed=False))
    finished = [e for e in events if e.type == "step_finished"]
    assert finished[-1].code == "OBSERVED_CHANGE_REFUSED", finished[-1]
    assert "the preview showed" in (finished[-1].message or ""), finished[-1].message
    assert not (top / "out").exists()
    # the refusal names the path and the rule, never the content (issue 34 item 5)
    assert "$6$annatestsecret" not in (finished[-1].message or "")
