"""Export's refusals and the playbook's shape (no daemon, no Ansible run)."""

from __future__ import annotations

import pytest

from anna_common.errors import AnnaError, ErrorCode
from annactl.commands import checkmode
from annactl.commands.export import checked_plan
from annactl.commands.playbook import ROLLED_BACK_TASK

from .plans import annotate_dict, command_at, exported, plan_dict, playbook

yaml = pytest.importorskip("yaml")


def test_a_banned_plan_is_never_exported() -> None:
    plan = annotate_dict(plan_dict([("wipe", "rm -rf /", "LOW")]))
    with pytest.raises(AnnaError) as err:
        checked_plan(plan)
    assert err.value.code == ErrorCode.PLAN_BANNED


def test_an_invalid_plan_is_never_exported() -> None:
    plan = annotate_dict(plan_dict([("note", "echo hi > /tmp/anna-x/n", "LOW")]))
    step = plan.plan.command_plan[0].model_copy(update={"rollback_id": "no-such-undo"})
    broken = plan.model_copy(update={"plan": plan.plan.model_copy(
        update={"command_plan": [step, step]})})  # a dangling rollback id, a duplicate id
    with pytest.raises(AnnaError) as err:
        checked_plan(broken)
    assert err.value.code == ErrorCode.PLAN_INVALID


def test_allow_high_only_with_a_high_approval() -> None:
    plan = annotate_dict(plan_dict([("edit", "cp /tmp/fstab.new /etc/fstab", "HIGH")]))
    assert "--allow-high" not in playbook(plan, "annad")
    assert '!unsafe "--allow-high"' in playbook(plan, "annad", word="/etc/fstab")


def _loader() -> type:
    class Loader(yaml.SafeLoader):  # type: ignore[misc,name-defined]
        pass

    Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    return Loader


def test_shell_rescue_undoes_in_reverse_only_steps_with_rollback() -> None:
    plan = annotate_dict(plan_dict(
        [("a", "echo a > /tmp/anna-x/a", "LOW"), ("b", "echo b > /tmp/anna-x/b", "LOW"),
         ("c", "echo c > /tmp/anna-x/c", "LOW")],
        rollback=[("ua", "rm -f /tmp/anna-x/a"), ("uc", "rm -f /tmp/anna-x/c")],
        rollback_ids={"a": "ua", "c": "uc"}))
    text = playbook(plan, "shell")
    play = yaml.load(text, Loader=_loader())[0]
    block = play["tasks"][-1]
    undo = [command_at(t["ansible.builtin.shell"]["cmd"], exported(text)["plan"])
            for t in block["rescue"] if "ansible.builtin.shell" in t]
    assert undo == ["rm -f /tmp/anna-x/c", "rm -f /tmp/anna-x/a"]
    assert block["rescue"][-1]["name"] == ROLLED_BACK_TASK
    assert all(t["ansible.builtin.shell"]["executable"] == "/bin/bash" for t in block["block"])


@pytest.mark.parametrize(("command", "expected"), [
    ("mkdir /srv/x", ("creates", "/srv/x")),
    ("mkdir -p /srv/x", ("creates", "/srv/x")),
    ("touch /srv/x", ("creates", "/srv/x")),
    ("rm -f /srv/x", ("removes", "/srv/x")),
    ("rmdir /srv/x", ("removes", "/srv/x")),
    ("rm -rf -- /srv/x", ("removes", "/srv/x")),
    ("mkdir srv/x", None),                    # relative: depends on the directory
    ("mkdir /srv/x /srv/y", None),            # two paths: one would decide for both
    ("mkdir /srv/$X", None), ("touch /srv/*.conf", None), ("mkdir /srv/{a,b}", None),
    ("touch ~/x", None), ("touch -r /etc/passwd /srv/x", None), ("touch -d yesterday /x", None),
    ("sudo mkdir /srv/x", None), ("env mkdir /srv/x", None), ("mkdir /srv/x && rm /y", None),
    ("mkdir /srv/x > /tmp/log", None), ("bash -c 'mkdir /srv/x'", None),
    ("/usr/bin/mkdir /srv/x", None), ("mkdir $(echo /srv/x)", None),
    ("cp /a /b", None), ("echo x > /srv/x", None),
])
def test_creates_and_removes_only_where_the_effect_is_one_path(command: str,
                                                               expected: object) -> None:
    assert checkmode.derive(command) == expected
