"""The client's side of verification and the lock-out guard, end to end (real annactl,
real per-user daemon): ``--keep-on-verify-fail``, the result lines, ``annactl confirm``."""

from __future__ import annotations

import json
import subprocess

from tests.daemon.logins import log_in
from tests.daemonfix import IS_ROOT, make_plan

from .conftest import Anna


def _verified_plan(anna: Anna) -> tuple[object, dict]:  # type: ignore[type-arg]
    target = anna.work / "v.txt"
    plan = make_plan([("write", f"echo one > {target}", "LOW")], goal="Write the file")
    plan["verify_commands"] = [{"id": "says_two", "description": "the file says two",
                                "command": f"grep -q two {target}"}]
    return target, plan


def test_a_failed_verify_command_rolls_back_and_is_shown(anna: Anna) -> None:
    target, plan = _verified_plan(anna)
    proc = anna.run("apply", str(anna.plan_file(plan)), "--yes")
    assert proc.returncode == 5, proc.stderr
    assert "verify failed" in proc.stdout and "says_two" in proc.stdout
    assert "VERIFY_FAILED" in proc.stdout
    assert not anna.work.joinpath("v.txt").exists(), target


def test_keep_on_verify_fail_keeps_the_plan(anna: Anna) -> None:
    _target, plan = _verified_plan(anna)
    code, out = anna.json("apply", str(anna.plan_file(plan)), "--yes", "--keep-on-verify-fail")
    assert code == 0, out
    assert out["status"] == "succeeded"
    assert [(v["step_id"], v["status"]) for v in out["record"]["verify"]] == [
        ("says_two", "failed")]
    assert anna.work.joinpath("v.txt").read_text() == "one\n"


def test_a_guarded_plan_says_so_and_confirm_keeps_it(anna: Anna) -> None:
    config = anna.daemon.base / "etc" / "ssh" / "sshd_config"
    config.parent.mkdir(parents=True)
    config.write_text("#PermitRootLogin yes\n")
    plan = make_plan([("harden", f"sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' {config}",
                       "LOW")], goal="Harden sshd")
    proc = anna.run("apply", str(anna.plan_file(plan)), "--yes", "--allow-high")
    assert proc.returncode == 0, proc.stderr
    assert "can cut you off" in proc.stderr and "annactl confirm" in proc.stderr
    plan_id = proc.stderr.split("annactl confirm ", 1)[1].split()[0]
    code, refused = anna.json("confirm", plan_id)  # from no login: proves nothing
    assert code != 0 and refused["code"] == "PERMISSION_DENIED", refused
    if not IS_ROOT:
        return  # only root can start a login session (pam_loginuid's step) for the rest
    login = subprocess.run([*anna.argv, "confirm", plan_id, "--json"], capture_output=True,
                           text=True, timeout=90, check=False, env=anna.env,
                           preexec_fn=log_in)
    out = json.loads(login.stdout)
    assert login.returncode == 0, out
    assert out["guard"]["state"] == "confirmed"
    code, again = anna.json("confirm", plan_id)
    assert code != 0 and again["code"] == "PLAN_STATE", again
    assert "PermitRootLogin no" in config.read_text()
