"""``annactl apply ID`` of a stored plan stays light (issue 12, item 5) and still says and
does exactly what the full client does.

The light path reads the settings itself (:mod:`annactl.core.quicksettings`) and the daemon's
answers as views (:mod:`annactl.core.wire`): no pydantic, no Typer, no risk engine. These
tests hold it to the full path — the same tiers, the same views, the same JSON, the same
settings — and fail if a heavy import comes back. (Speed itself is measured in
``bench/startup.py``, never asserted here.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from rich.console import Console

from anna_common.findings import AnnotatedPlan
from anna_common.levels import RiskLevel
from anna_common.plan import ActionPlan
from anna_common.protocol.models import ExecEvent, Health, PlanRecord, SessionEnv
from anna_common.protocol.preview import PlanPreview
from anna_common.protocol.routes import SESSION_KEYS
from annactl.core.config import ClientSettings, load_settings
from annactl.core.daemon_client import DaemonClient
from annactl.core.quicksettings import KINDS, SETTINGS, Number, QuickSettings, quick_settings
from annactl.core.wire import RISK_FIELDS, ShapeError, Wire
from annactl.ui import confirm, render
from tests.daemon import test_faults_stop as stop
from tests.daemonfix import RunningDaemon, running_daemon

from .conftest import Anna
from .plans import plan_dict

HEAVY = ("pydantic", "pydantic_settings", "typer", "click", "fastapi", "httpx", "textual",
         "prompt_toolkit", "anna_common.plan", "anna_common.protocol.models", "anna_common.risk.assess",
         "anna_common.validate", "anna_common.telemetry", "annactl.planning.planner",
         "annactl.core.config")
"""What applying a stored plan must not import (packages, or single modules)."""
PROBE = ("import sys; sys.argv = ['annactl', *sys.argv[1:]]; from annactl.cli import main; "
         f"code = main(); heavy = {HEAVY!r}; "
         "loaded = sorted(h for h in heavy if any(m == h or m.startswith(h + '.') "
         "for m in sys.modules)); "
         "print('LOADED', *loaded, file=sys.stderr); raise SystemExit(code)")
FULL = {"ANNA_ALLOWED_MODELS": "[]"}
"""A list among the settings: the quick reader declines, so apply takes the full client."""


def _stored(anna: Anna, count: int, steps: list[tuple[str, str, str]] | None = None
            ) -> list[str]:
    plan = ActionPlan.model_validate(plan_dict(steps or [("kernel", "uname -r", "INFO")],
                                               goal="Print the kernel release"))
    client = DaemonClient(anna.daemon.socket)
    return [client.submit(plan, request="test").plan_id for _ in range(count)]


def _probe(anna: Anna, *args: str, extra_env: dict[str, str] | None = None
           ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args],
                          env={**anna.env, **(extra_env or {})}, capture_output=True,
                          text=True, check=False, timeout=90)
    assert "Traceback" not in proc.stderr, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED"))
    return proc, line.split()[1:]


def test_apply_of_a_stored_plan_imports_nothing_heavy(anna: Anna) -> None:
    light, full = _stored(anna, 2)
    proc, loaded = _probe(anna, "apply", light, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert loaded == [], loaded
    # a read-only plan: its answer on stdout, the chrome on stderr (issue 36.5)
    assert "Result: succeeded" in proc.stderr and "uname -r" in proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("The plan succeeded")
    # the comparison below is meaningful: the full client does load them
    proc, loaded = _probe(anna, "apply", full, "--yes", extra_env=FULL)
    assert proc.returncode == 0 and "pydantic" in loaded and "annactl.core.config" in loaded


def _same(text: str, plan_id: str) -> str:
    return re.sub(r"\b(ts|[a-z]+_at)\": [0-9.]+", r'\1": 0', text.replace(plan_id, "ID"))


@pytest.mark.parametrize("extra", [["--yes"], ["--yes", "--json"], []])
def test_light_and_full_apply_say_the_same(anna: Anna, extra: list[str]) -> None:
    """Text, JSON and exit status agree, for a LOW plan too (declined without ``--yes``:
    there is no terminal to ask on) — the tier is read from the views."""
    note = anna.work / "note.txt"
    steps = [("write", f"echo hi > {note}", "LOW"), ("kernel", "uname -r", "INFO")]
    light, full = _stored(anna, 2, steps)
    one = anna.run("apply", light, *extra)
    note.unlink(missing_ok=True)
    two = anna.run("apply", full, *extra, extra_env=FULL)
    assert one.returncode == two.returncode == (0 if extra else 4), (one.stderr, two.stderr)
    assert _same(one.stdout, light) == _same(two.stdout, full)
    assert _same(one.stderr, light) == _same(two.stderr, full)
    assert note.exists() == bool(extra)
    if "--json" in extra:
        assert json.loads(one.stdout)["status"] == "succeeded"


# ---------------------------------------------------------------------- views read like models


def _plans(request: pytest.FixtureRequest) -> list[AnnotatedPlan]:
    return [request.getfixturevalue(name) for name in
            ("info_plan", "low_plan", "medium_plan", "high_plan", "banned_plan", "hostile_plan")]


def _shown(renderable: Any) -> str:
    console = Console(width=100, record=True, force_terminal=True)
    with console.capture():
        console.print(renderable)
    return console.export_text(styles=True)


def test_tiers_and_views_are_the_same_from_a_wire_view(request: pytest.FixtureRequest) -> None:
    for plan in _plans(request):
        seen = Wire(json.loads(plan.model_dump_json()))
        assert confirm.requirement(seen) == confirm.requirement(plan)
        assert _shown(render.plan_view(seen)) == _shown(render.plan_view(plan))
        assert seen.model_dump() == plan.model_dump(mode="json")
    tiers = {str(confirm.requirement(p).tier) for p in _plans(request)}
    assert tiers == {"none", "one", "two", "banned"}  # every tier was compared


def test_a_risk_level_is_a_level_and_a_bad_one_is_refused(high_plan: AnnotatedPlan) -> None:
    data = json.loads(high_plan.model_dump_json())
    step = Wire(data).steps[-1]
    assert type(step.final_risk) is RiskLevel and step.final_risk > RiskLevel.LOW
    data["steps"][-1]["final_risk"] = "CRITICAL"
    with pytest.raises(ShapeError):
        _ = Wire(data).steps[-1].final_risk
    del data["steps"][-1]["final_risk"]
    with pytest.raises(ShapeError):
        confirm.requirement(Wire(data))
    assert getattr(Wire(data), "no_such_field", "default") == "default"


def _model_fields(model: type[BaseModel], seen: set[type[BaseModel]],
                  found: dict[str, set[Any]]) -> None:
    if model in seen:
        return
    seen.add(model)
    for name, info in model.model_fields.items():
        stack = [info.annotation]
        while stack:
            kind = stack.pop()
            if typing.get_args(kind):
                stack.extend(typing.get_args(kind))
            elif isinstance(kind, type) and issubclass(kind, BaseModel):
                _model_fields(kind, seen, found)
            else:
                found.setdefault(name, set()).add(kind)


def test_risk_fields_are_the_models_risk_fields() -> None:
    found: dict[str, set[Any]] = {}
    for model in (PlanRecord, PlanPreview, ExecEvent, Health):
        _model_fields(model, set(), found)
    levels = {name for name, kinds in found.items() if RiskLevel in kinds}
    assert levels == RISK_FIELDS
    for name in RISK_FIELDS:  # never another meaning under the same name
        assert found[name] <= {RiskLevel, type(None)}, (name, found[name])


def test_the_light_session_is_the_models(monkeypatch: pytest.MonkeyPatch) -> None:
    assert tuple(SessionEnv.model_fields) == SESSION_KEYS
    monkeypatch.setenv("LANG", "x" * 900)
    monkeypatch.setenv("DISPLAY", "")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-1")
    light = DaemonClient(Path("/nonexistent"), wire=True).session()
    full = DaemonClient(Path("/nonexistent")).session()
    assert isinstance(full, SessionEnv)
    assert light == full.model_dump(exclude_none=True)


# ---------------------------------------------------------------------- the quick settings


def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for key in [k for k in os.environ if k.lower().startswith("anna_")]:
        monkeypatch.delenv(key)
    config = tmp_path / "config.toml"
    monkeypatch.setenv("ANNA_CONFIG", str(config))
    return config


def _kind_of(name: str) -> Any:
    """What the quick reader should make of a field, from the model's own declaration."""
    info = ClientSettings.model_fields[name]
    if typing.get_origin(info.annotation) is typing.Literal:
        return typing.get_args(info.annotation)
    (kind,) = {k for k in typing.get_args(info.annotation) or (info.annotation,)
               if k is not type(None)}
    if kind in (int, float):
        bounds = {type(m).__name__: getattr(m, type(m).__name__.lower()) for m in info.metadata}
        low = bounds.get("Gt", bounds.get("Ge"))
        return Number(kind, low, bounds.get("Le", float("inf")), low_open="Gt" in bounds)
    return str if kind.__name__ == "SecretStr" else kind


def test_quick_settings_know_every_setting(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    assert set(ClientSettings.model_fields) == SETTINGS
    assert set(SETTINGS) - set(KINDS) == {"allowed_models", "profiles"}
    for name, kind in KINDS.items():
        assert _kind_of(name) == kind, name
    _clean_env(monkeypatch, tmp_path)
    defaults = QuickSettings()
    full = load_settings()
    for name in QuickSettings.__dataclass_fields__:
        assert getattr(defaults, name) == getattr(full, name), name


CASES: list[tuple[dict[str, str], str | None, bool]] = [
    ({}, None, True),
    ({"ANNA_AUTOSTART": "false", "ANNA_LLM_URL": "http://127.0.0.1:9"}, None, True),
    ({"anna_autostart": "0", "ANNA_STATE_DIR": "{tmp}/st"}, None, True),
    ({"ANNA_EVALUATE": "false", "ANNA_LLM_PROVIDER": "openai"}, None, True),
    ({}, 'socket = "{tmp}/a.sock"\nautostart = false\nevaluate = true\n', True),
    ({"ANNA_SOCKET": "{tmp}/env.sock"}, 'socket = "{tmp}/toml.sock"\n', True),
    ({"ANNA_AUTOSTART": "no"}, None, False),           # a spelling pydantic takes, not read here
    ({"ANNA_AUTOSTART": "maybe"}, None, False),        # invalid: the full reader's error
    ({"ANNA_LLM_PROVIDER": "gpt"}, None, False),
    ({"ANNA_RECONNECT_WAIT_S": "5", "ANNA_LLM_TIMEOUT": "20.5"}, None, True),
    ({"ANNA_MAX_MODEL_CALLS": "32", "ANNA_MAX_PROMPT_BYTES": "1024"}, None, True),
    ({"ANNA_MAX_MODEL_CALLS": "33"}, None, False),     # out of bounds: the full reader's error
    ({"ANNA_LLM_TIMEOUT": "0"}, None, False),
    ({"ANNA_LLM_TIMEOUT": "1e3"}, None, False),        # spellings not read here
    ({"ANNA_LLM_TIMEOUT": " 20"}, None, False),
    ({"ANNA_RECONNECT_WAIT_S": "-1"}, None, False),
    ({"ANNA_ALLOWED_MODELS": '["m"]'}, None, False),
    ({"ANNA_STATE_DIR": ""}, None, False),
    ({"ANNA_SOCKET": "a", "anna_socket": "b"}, None, False),
    ({}, 'llm_timeout = 3\nreconnect_wait_s = 2.5\nmax_session_calls = 9\n', True),
    ({}, 'max_model_calls = 3.0\n', False),
    ({}, 'llm_timeout = true\n', False),
    ({}, 'colour = "red"\n', False),                   # unknown key: the full reader refuses it
    ({}, 'autostart = "false"\n', True),
    ({}, 'autostart = 0\n', False),
    ({}, 'socket = [\n', False),                        # not TOML
]


@pytest.mark.parametrize(("env", "toml", "quick"), CASES)
def test_quick_settings_agree_with_the_full_reader(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str],
        toml: str | None, quick: bool) -> None:
    config = _clean_env(monkeypatch, tmp_path)
    if toml is not None:
        config.write_text(toml.replace("{tmp}", str(tmp_path)))
    for key, value in env.items():
        monkeypatch.setenv(key, value.replace("{tmp}", str(tmp_path)))
    read = quick_settings()
    assert (read is not None) == quick
    if read is None:
        return
    full = load_settings()  # what the quick reader accepts, the full one accepts too
    for name in QuickSettings.__dataclass_fields__:
        assert getattr(read, name) == getattr(full, name), name


# ---------------------------------------------------------------------- a daemon that stops


def _start_stored(daemon: RunningDaemon, **env: str) -> tuple[subprocess.Popen[str], Path]:
    """``annactl apply ID --yes`` of a stored gated plan, on the light path."""
    plan_id = daemon.client().submit(ActionPlan.model_validate(stop.gated_plan())).plan_id
    err = daemon.base / "annactl.err"
    with err.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "annactl.cli", "apply", plan_id,
                                 "--yes"], stdout=subprocess.PIPE, stderr=stderr, text=True,
                                env=stop.cli_env(daemon, **env), cwd=str(daemon.base))
    return proc, err


def test_light_apply_past_the_grace_reports_the_undone_plan() -> None:
    """The daemon stops mid-plan and is gone: the outcome is the journal's or, when the
    daemon closed first, the one the plan's own events gave (a record built around the
    plan as shown, which here is a view)."""
    with running_daemon(user_mode=True, env={"ANNAD_STOP_GRACE_S": "0.5"}) as daemon:
        proc, err = _start_stored(daemon, ANNA_RECONNECT_WAIT_S="1")
        stop.running_plan_id(daemon)
        assert daemon.proc is not None
        daemon.proc.send_signal(15)
        code, out, text = stop.finish(proc, err)
        assert stop.exited(daemon) == 0
        assert code == 5, (out, text)
        flat = " ".join(out.split())
        assert "Result: rolled_back" in flat, out
        assert "this is the plan's own event stream" in flat or "Rollback" in out, out
        assert not (daemon.home / "one.txt").exists()


def test_light_apply_when_the_daemon_never_comes_back_says_so() -> None:
    with running_daemon(user_mode=True) as daemon:
        proc, err = _start_stored(daemon, ANNA_RECONNECT_WAIT_S="1")
        plan_id = stop.running_plan_id(daemon)
        daemon.kill()
        code, out, text = stop.finish(proc, err)
        assert code == 7, (out, text)
        flat = " ".join(text.split())
        assert "did not answer again within 1 s" in flat and f"annactl show {plan_id}" in flat
