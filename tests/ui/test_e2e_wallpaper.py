"""hyprpaper's wallpaper change persists in its config and rolls back byte-exact, through
the real daemon in a scratch home; the template plans twice (record, then undo to what was
recorded) end to end."""

from __future__ import annotations

import json

from anna_common.distro import context_from_telemetry
from annactl.planning import templates
from tests.planner.conftest import make_telemetry

from .conftest import Anna

CONF = ("# my hyprpaper\nipc = on\npreload = ~/old.png\n"
        "wallpaper = DP-1,~/old.png\nsplash = false\n")


def _scratch(anna: Anna) -> tuple[object, bytes]:
    conf = anna.daemon.home / ".config" / "hypr" / "hyprpaper.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(CONF)
    (anna.daemon.home / "pic.png").write_bytes(b"\x89PNG\r\n")
    return conf, conf.read_bytes()


def test_hyprpaper_config_is_rewritten_and_restored_byte_exact(anna: Anna) -> None:
    conf, before = _scratch(anna)
    home = str(anna.daemon.home)
    snapshot = make_telemetry()  # Hyprland with hyprpaper running
    found = templates.match("change my wallpaper to ~/pic.png", snapshot,
                            context=context_from_telemetry(snapshot, home), home=home,
                            recorded={"current_config": CONF})
    assert found is not None and found.plan is not None
    plan = found.plan.model_dump(mode="json")
    # the config step alone (no compositor here to reload): what the daemon backs up
    plan["command_plan"] = [s for s in plan["command_plan"] if s["id"] == "write_config"]
    plan["rollback_plan"] = []
    plan["necessary_checks"] = []
    code, applied = anna.json("apply", str(anna.plan_file(plan)), "--yes")
    assert code == 0 and applied["status"] == "succeeded", applied
    after = conf.read_text()
    assert f"preload = {home}/pic.png\nwallpaper = ,{home}/pic.png\n" in after
    assert "ipc = on" in after and "splash = false" in after and "old.png" not in after
    code, undone = anna.json("rollback", applied["plan_id"], "--yes")
    assert code == 0 and undone["status"] == "rolled_back", undone
    assert conf.read_bytes() == before
    # the daemon's own backup: no timestamped copy was left beside the file
    assert sorted(p.name for p in conf.parent.iterdir()) == ["hyprpaper.conf"]


def test_the_template_records_then_plans_its_undo(anna: Anna) -> None:
    _scratch(anna)
    telemetry = anna.work / "telemetry.json"
    telemetry.write_text(make_telemetry().model_dump_json())
    proc = anna.run("plan", "--telemetry-file", str(telemetry), "--json",
                    "change my wallpaper to ~/pic.png",
                    extra_env={"HOME": str(anna.daemon.home)})
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    plan = doc["plan"]
    home = str(anna.daemon.home)
    assert plan["meta"]["template_used"] == "wallpaper_change_hyprpaper_v1"
    undo = {r["id"]: r["command"] for r in plan["rollback_plan"]}
    apply = next(s for s in plan["command_plan"] if s["id"] == "apply")
    assert undo[apply["rollback_id"]] == (f"hyprctl hyprpaper preload {home}/old.png && "
                                          f"hyprctl hyprpaper wallpaper DP-1,{home}/old.png")
    write = next(s for s in plan["command_plan"] if s["id"] == "write_config")
    assert write["command"].startswith("sed -i -e ")


def test_a_wallpaper_request_leaves_one_plan(anna: Anna) -> None:
    """Issues 22.7 / 23.8: the recording round revises the first plan (``revises``), so
    history holds the one plan offered, not a first plan marked dry_run beside it."""
    _scratch(anna)
    telemetry = anna.work / "telemetry.json"
    telemetry.write_text(make_telemetry().model_dump_json())
    code, planned = anna.json("plan", "--telemetry-file", str(telemetry),
                              "change my wallpaper to ~/pic.png",
                              extra_env={"HOME": str(anna.daemon.home)})
    assert code == 0 and planned["plan"]["meta"]["template_used"] == \
        "wallpaper_change_hyprpaper_v1"
    code, history = anna.json("history")
    assert code == 0
    assert [(p["plan_id"], p["status"]) for p in history["plans"]] == \
        [(planned["plan_id"], "submitted")]
    # the one stored plan is the recorded one: its undo restores what the checks printed
    code, shown = anna.json("show", planned["plan_id"])
    assert code == 0 and shown["record"]["digest"] == planned["digest"]
    assert shown["record"]["annotated"]["plan"]["rollback_plan"] == \
        planned["plan"]["rollback_plan"]
    assert "old.png" in json.dumps(planned["plan"]["rollback_plan"])
