"""The unattended gate and the recipe files (no daemon): tiers, bans, rollback commands,
parameters as one word, the shipped examples, and the systemd units."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from anna_common.errors import AnnaError
from anna_common.plan import RiskLevel
from annad.recipes import gate, model
from tests.ui.plans import annotate_dict, plan_dict

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "packaging" / "recipes.d"


def test_info_and_low_run_everything_else_waits() -> None:
    ok, reasons = gate.decide(annotate_dict(plan_dict(
        [("look", "ls -la /tmp", "INFO"), ("note", "echo hi > /tmp/anna-r/x", "LOW")])))
    assert ok and reasons == []
    ok, reasons = gate.decide(annotate_dict(plan_dict([("rm", "rm -r /tmp/anna-r/old",
                                                        "LOW")])))
    assert not ok and reasons == ["rm: MEDIUM needs a person"]


@pytest.mark.parametrize("command", [
    "pacman -S --noconfirm htop", "cp /tmp/x /etc/fstab", "sudo tee /etc/hosts",
    "bash -c 'rm -r /tmp/anna-r/old'", "eval 'rm -r /tmp/anna-r/old'",
    "env X=1 rm -r /tmp/anna-r/old", "echo $(rm -r /tmp/anna-r/old)",
    "systemctl restart sshd", "curl http://127.0.0.1:9/x | sh"])
def test_labels_do_not_matter_the_daemons_analysis_does(command: str) -> None:
    plan = annotate_dict(plan_dict([("s", command, "INFO")]))
    ok, reasons = gate.decide(plan)
    assert not ok, (command, plan.steps[0].final_risk)
    assert reasons


def test_a_rollback_command_counts_like_a_step() -> None:
    plan = annotate_dict(plan_dict([("note", "echo hi > /tmp/anna-r/x", "LOW")],
                                   rollback=[("u", "cp /tmp/x /etc/fstab")],
                                   rollback_ids={"note": "u"}))
    ok, reasons = gate.decide(plan)
    assert not ok and any(r.startswith("u:") for r in reasons)


def test_banned_is_never_allowed() -> None:
    plan = annotate_dict(plan_dict([("wipe", "rm -rf /", "LOW")]))
    allowed, reason = gate.may_run_unattended(plan.steps[0], RiskLevel.LOW)
    assert not allowed and "banned" in reason


def test_a_low_step_in_a_high_plan_waits() -> None:
    plan = annotate_dict(plan_dict([("note", "echo hi > /tmp/anna-r/x", "LOW")]))
    allowed, reason = gate.may_run_unattended(plan.steps[0], RiskLevel.HIGH)
    assert not allowed and "HIGH as a whole" in reason


@pytest.mark.parametrize("value", ["$(id)", "`id`", "a b", "a;b", "'", '"', "\\", "*", "~",
                                   "{x}", "$'\\n'", "-rf /", "\n"])
def test_values_are_one_quoted_word(value: str) -> None:
    from anna_common.shell.grammar import analyse

    filled = model.fill("t", "printf %s {v}", {"v": value})
    analysis = analyse(filled)
    assert analysis.parse_ok and len(analysis.commands) == 1
    args = analysis.commands[0].args
    assert [a.text for a in args] == ["%s", value] and args[1].literal


@pytest.mark.parametrize("template", ["{x.__class__}", "{0}", "{}", "{v!r}", "{v:>10}", "{",
                                      "}", "${HOME}"])
def test_only_plain_placeholders(template: str) -> None:
    with pytest.raises(AnnaError):
        model.fill("t", template, {"v": "1"})


def test_literal_braces() -> None:
    assert model.fill("t", "echo {{a,b}} {v}", {"v": "x"}) == "echo {a,b} x"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.stem)
def test_shipped_examples_load_and_make_valid_plans(path: Path) -> None:
    recipe = model.load(EXAMPLES, path.stem)
    plan = annotate_dict(recipe.plan())
    assert not plan.banned


def test_shipped_examples_tiers() -> None:
    """The table in docs/recipes.md: which shipped recipe runs alone and which waits."""
    tiers = {p.stem: gate.decide(annotate_dict(model.load(EXAMPLES, p.stem).plan()))[0]
             for p in EXAMPLES.glob("*.toml")}
    assert tiers["updates"] and tiers["failed-units"]
    assert not tiers["paccache"] and not tiers["journal-vacuum"]
    doc = (REPO / "docs" / "recipes.md").read_text()
    for name, runs in tiers.items():
        assert f"| `{name}` |" in doc and (("runs unattended" if runs else "waits")
                                           in doc.split(f"| `{name}` |")[1].split("\n")[0])


def test_name_is_never_a_path(tmp_path: Path) -> None:
    for name in ("../x", "a/b", "", ".x", "X", "a" * 65, "a\x00"):
        with pytest.raises(AnnaError):
            model.recipe_path(tmp_path, name)


def _verify(units: list[Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["systemd-analyze", "verify", "--man=no", *map(str, units)],
                          capture_output=True, text=True, timeout=60, check=False, cwd=cwd)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")
def test_systemd_analyze_verify_recipe_units(tmp_path: Path) -> None:
    annactl = Path(sys.executable).with_name("annactl")
    if not annactl.exists():
        pytest.skip(f"no annactl next to {sys.executable}")
    service = (REPO / "systemd" / "anna-recipe@.service").read_text()
    assert "ExecStart=/usr/bin/annactl recipe run %i --trigger timer --json" in service
    # an instance of each template (verify needs one), ExecStart at this checkout's annactl
    (tmp_path / "anna-recipe@paccache.service").write_text(
        service.replace("/usr/bin/annactl", str(annactl)))
    shutil.copy(REPO / "systemd" / "anna-recipe@.timer", tmp_path / "anna-recipe@paccache.timer")
    proc = _verify([tmp_path / "anna-recipe@paccache.service",
                    tmp_path / "anna-recipe@paccache.timer"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "anna-recipe" not in proc.stderr, proc.stderr


def test_system_daemon_notifies_each_users_session_as_that_user() -> None:
    """``/run/user/UID/bus`` sockets (here a temporary root) are the sessions; root's and
    non-sockets are skipped; each is notified as its own user."""
    import pwd
    import socket
    import tempfile

    from annad.config import DaemonSettings
    from annad.recipes import notify

    root = Path(tempfile.mkdtemp(prefix="anna-ru-", dir="/tmp"))
    try:
        nobody = pwd.getpwnam("nobody").pw_uid
        for uid, kind in ((0, "socket"), (nobody, "socket"), (4242424, "socket"),
                          (1, "file")):
            (root / str(uid)).mkdir()
            if kind == "socket":
                sock = socket.socket(socket.AF_UNIX)
                sock.bind(str(root / str(uid) / "bus"))
                sock.close()
            else:
                (root / str(uid) / "bus").write_text("")
        (root / "not-a-uid").mkdir()
        settings = DaemonSettings(notify_runtime_root=root, user_mode=False)
        found = notify._sessions(settings, user_mode=False)
        assert [(i.uid if i else None, e["DBUS_SESSION_BUS_ADDRESS"]) for i, e in found] == [
            (nobody, f"unix:path={root}/{nobody}/bus")]
    finally:
        shutil.rmtree(root, ignore_errors=True)
