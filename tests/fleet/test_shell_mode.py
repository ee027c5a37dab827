"""``--mode shell`` playbooks run by the real ansible-playbook on localhost (-c local):
success, a failing step rolled back in reverse, and ``--check`` changing nothing."""

from __future__ import annotations

from pathlib import Path

from annactl.commands.playbook import ROLLED_BACK_TASK

from .plans import annotate_dict, plan_dict, playbook


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): (p.read_text() if p.is_file() else "<dir>")
            for p in sorted(root.rglob("*"))}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "play.yml"
    path.write_text(text)
    return path


def test_success_runs_checks_and_steps(tmp_path: Path, run_playbook) -> None:
    d = tmp_path / "scratch"
    d.mkdir()
    plan = annotate_dict(plan_dict(
        [("mk", f"mkdir {d}/conf", "LOW"), ("write", f"echo hello > {d}/conf/a.txt", "LOW")],
        checks=[("look", f"ls -la {d}")],
        rollback=[("undo-write", f"rm -f {d}/conf/a.txt")], rollback_ids={"write": "undo-write"}))
    ran = run_playbook(_write(tmp_path, playbook(plan, "shell")))
    assert ran.rc == 0, ran.out + ran.err
    assert (d / "conf" / "a.txt").read_text() == "hello\n"
    assert "failed=0" in ran.out and "changed=2" in ran.out
    # the check task never counts as a change
    assert "check look" in ran.out


def test_failing_step_rolls_back_the_steps_that_ran_in_reverse(tmp_path: Path,
                                                                run_playbook) -> None:
    d = tmp_path / "scratch"
    d.mkdir()
    (d / "keep.txt").write_text("keep\n")
    plan = annotate_dict(plan_dict(
        [("one", f"echo 1 > {d}/one.txt", "LOW"), ("two", f"echo 2 > {d}/two.txt", "LOW"),
         ("boom", f"cp {d}/missing.txt {d}/three.txt", "LOW"),
         ("never", f"echo 4 > {d}/four.txt", "LOW")],
        rollback=[("u1", f"rm -f {d}/one.txt"), ("u2", f"rm -f {d}/two.txt"),
                  ("u4", f"rm -f {d}/four.txt")],
        rollback_ids={"one": "u1", "two": "u2", "never": "u4"}))
    ran = run_playbook(_write(tmp_path, playbook(plan, "shell")))
    assert ran.rc != 0
    assert _tree(d) == {"keep.txt": "keep\n"}
    out = ran.out
    assert ROLLED_BACK_TASK in out
    # newest first; the step that never ran has its undo skipped
    assert out.index("undo step 2 two") < out.index("undo step 1 one")
    assert "TASK [step 4 never" not in out
    assert "skipping: [localhost]" in out.split("TASK [undo step 4 never")[1].split("TASK")[0]
    assert "failed=1" in out and "rescued=1" in out


def test_check_mode_changes_nothing_and_predicts_creates(tmp_path: Path, run_playbook) -> None:
    d = tmp_path / "scratch"
    d.mkdir()
    (d / "old").mkdir()
    plan = annotate_dict(plan_dict(
        [("mk", f"mkdir {d}/new", "LOW"), ("mk-old", f"mkdir -p {d}/old", "LOW"),
         ("rm", f"rm -f {d}/old/none.txt", "LOW"), ("write", f"echo x > {d}/x.txt", "LOW")]))
    before = _tree(d)
    ran = run_playbook(_write(tmp_path, playbook(plan, "shell")), "--check", "-v")
    assert ran.rc == 0, ran.out + ran.err
    assert _tree(d) == before
    out = ran.out
    # creates: missing -> would change; existing -> ok; removes: missing -> ok
    assert "changed: [localhost]" in out.split("step 1 mk")[1].split("TASK")[0]
    assert "ok: [localhost]" in out.split("step 2 mk-old")[1].split("TASK")[0]
    assert "ok: [localhost]" in out.split("step 3 rm")[1].split("TASK")[0]
    assert "skipping: [localhost]" in out.split("step 4 write")[1].split("TASK")[0]
