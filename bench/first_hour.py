"""Issue 39: the twenty everyday requests of a first hour, offline and with a scripted model
that answers what it is shown; each answer judged right or not against the machine.

    PYTHONPATH=. .venv/bin/python bench/first_hour.py                    # both, both machines
    ANNA_CODE=/work/main PYTHONPATH=. .venv/bin/python bench/first_hour.py   # before (main)

The machine is bench/_telemetry.py's Arch + Hyprland snapshot (kernel 6.12.1-arch1-1, htop
and openssh installed, no firewall, no smartmontools, bluetooth.service failed) with the
addresses, listeners, logins and unit files the telemetry of issue 39 adds (left out when
the code under test does not know those fields), and its Debian twin (``apt``, no package
list, ``ssh.service``). HOME is ``/home/user``. No daemon: nothing runs, checks included,
so a plan is judged by what it would run and what it says.

Offline: no model listens (``LLM_UNAVAILABLE`` unless a template answers). Scripted: the
fake LLM server (tests/fakellm.py) answers each form as a capable model would *from what
the request and the user message show it*: a fact it is not shown it does not know; a
prompt that forbids commands gets none.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, os.environ.get("ANNA_CODE") or str(HERE.parent))
os.environ["HOME"] = HOME = "/home/user"

from _telemetry import telemetry as arch_snapshot  # noqa: E402
from everyday import FIRST_HOUR, _fakellm  # noqa: E402

from anna_common.errors import AnnaError  # noqa: E402
from anna_common.telemetry import Telemetry  # noqa: E402
from annactl.core.config import load_settings  # noqa: E402
from annactl.planning.planner import Planner  # noqa: E402

ADDRESS = "192.168.1.23"
USER = "alice"
UNIT_FILES = ("NetworkManager.service", "sshd.service", "nginx.service", "docker.service",
              "bluetooth.service", "systemd-journald.service", "hyprpaper.service")


def machine(distro: str) -> Telemetry:
    """The snapshot, with what this checkout's telemetry can hold."""
    t = arch_snapshot(packages=300)
    t.collected_at = time.time() - 5
    fields = Telemetry.model_fields
    if "network" in fields:
        from anna_common.telemetry import Address, Listener, LoginSession, NetworkInfo

        t.network = NetworkInfo(available=True, addresses=[
            Address(interface="lo", family="ipv4", address="127.0.0.1", prefix=8),
            Address(interface="wlan0", family="ipv4", address=ADDRESS, prefix=24)],
            listeners=[Listener(proto="tcp", address="0.0.0.0", port=22, process="sshd"),
                       Listener(proto="tcp", address="127.0.0.1", port=631, process="cupsd")])
        t.sessions = [LoginSession(user=USER, terminal="tty1")]
    units = list(UNIT_FILES)
    if distro == "debian":
        t.system.distro_id, t.system.distro_name = "debian", "Debian GNU/Linux 12 (bookworm)"
        t.system.kernel = "6.1.0-27-amd64"
        t.packages = type(t.packages)(manager="none", available=False,
                                      reason="not pacman: no database at /var/lib/pacman/local")
        units = ["NetworkManager.service", "ssh.service", "nginx.service", "cron.service"]
    if "unit_files" in type(t.services).model_fields:
        t.services.unit_files = units
    return t


# ---------------------------------------------------------------- the scripted model
_FACTS = {  # request words → (pattern in the user message, citation doc)
    "kernel": (r'"kernel":\s*"([^"]+)"', "telemetry:system.kernel"),
    " ip ": (r'"addresses":\s*\[([^\]]*)\]', "telemetry:network.addresses"),
    "logged": (r'"logged_in":\s*\[([^\]]*)\]', "telemetry:logged_in"),
    "listening": (r'"listening":\s*\[([^\]]*)\]', "telemetry:network.listening"),
    " up?": (r'"uptime_h":\s*(\d+)', "telemetry:system.uptime_h"),
    "failed": (r'"units":\s*\[\{"name":\s*"([^"]+)"', "telemetry:failed_units.units"),
    "memory": (r'"top":\s*\[(.*?)\]', "telemetry:processes.top"),
    "system": (r'"memory":\s*(\{[^}]*\})', "telemetry:memory"),
}
NOT_SHOWN = "The documents I was given do not show this."


def _answer(request: str, system: str, user: str) -> dict[str, Any]:
    padded = f" {request.lower()} "
    if "tar" in padded and "how do i" in padded:
        if "never propose commands" in system.lower():
            return {"answer": NOT_SHOWN, "citations": []}
        return {"answer": "Run tar -xzf FILE.tar.gz (x extract, z gzip, f the file).",
                "citations": []}
    for word, (pattern, doc) in _FACTS.items():
        if word in padded:
            found = re.search(pattern, user)
            if found is None or not found.group(1).strip():
                return {"answer": NOT_SHOWN, "citations": []}
            value = found.group(1)[:110]
            return {"answer": f"From the telemetry: {value}.",
                    "citations": [{"doc": doc, "quote": value}]}
    return {"answer": NOT_SHOWN, "citations": []}


def _step(command: str, risk: str = "MEDIUM") -> dict[str, Any]:
    return {"id": "s1", "description": "Do it", "command": command, "risk_level": risk,
            "requires_confirmation": risk != "INFO", "rollback_id": None}


def _contract(**fields: Any) -> dict[str, Any]:
    plan: dict[str, Any] = json.loads(_fakellm().plan_json(**fields))
    return plan


def _plan(request: str, user: str) -> dict[str, Any]:
    text = request.lower()
    arch = '"distro":"arch"' in user.replace(" ", "")
    if "update" in text:
        steps = [_step("pacman -Syu --noconfirm" if arch else "apt-get upgrade -y")]
        return _contract(goals=["Upgrade the system"], command_plan=steps,
                         notes_for_user="I will upgrade every package.")
    if text.startswith("install "):
        name = text.split()[-1]
        command = f"pacman -S --needed --noconfirm {name}" if arch else \
            f"apt-get install -y {name}"
        return _contract(goals=[f"Install {name}"],
                         command_plan=[_step(command)],
                         notes_for_user=f"I will install {name}.")
    if "cache" in text:
        command = "paccache -rk2" if arch else "apt-get clean"
        return _contract(goals=["Clean the package cache"],
                         command_plan=[_step(command)],
                         notes_for_user="I will clean the package cache.")
    if "alias" in text:
        command = f"printf '%s\\n' \"alias ll='ls -la'\" >> {HOME}/.bashrc"
        return _contract(goals=["Define the alias ll"],
                         command_plan=[_step(command, "HIGH")],
                         notes_for_user="ll will run ls -la.")
    if "big files" in text:
        command = f"du -ah {HOME} 2>/dev/null | sort -rh | head -n 20"
        return _contract(goals=["List the big files in the home"],
                         command_plan=[_step(command, "INFO")],
                         notes_for_user="The biggest files and directories.")
    if "health" in text:
        return _contract(goals=["Check disk health"],
                         command_plan=[_step("smartctl -H /dev/nvme0n1",
                                             "INFO")],
                         notes_for_user="SMART verdict of the disk.")
    if "tar" in text:
        return _contract(goals=["Explain extracting a tar.gz"],
                         notes_for_user="Run tar -xzf FILE.tar.gz.")
    return _contract(goals=[f"Answer: {request}"], notes_for_user=NOT_SHOWN)


def scripted() -> Any:
    """The responder: each form answered from what the model is shown."""
    fake = _fakellm()

    def respond(body: dict[str, Any]) -> Any:
        messages = body.get("messages") or []
        system = messages[0]["content"] if messages else ""
        user = "".join(m["content"] for m in messages[1:] if m.get("role") == "user")
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or body.get("format") or {}
        props = schema.get("properties", {}) if isinstance(schema, dict) else {}
        found = re.search(r"REQUEST: (.*)", user)
        request = found.group(1).strip() if found else ""
        words = request.rstrip("?.!").split()
        if "answer" in props and "command_plan" not in props:
            reply: dict[str, Any] = _answer(request, system, user)
        elif "package" in props:
            reply = {"action": "remove" if words[0] in ("remove", "uninstall") else "install",
                     "package": words[-1].lower()}
        elif "unit" in props:
            verb = "enable" if words[0] == "enable" else "restart"
            reply = {"action": verb, "unit": f"{words[-1].lower()}.service"}
        elif "path" in props and "command_plan" not in props:
            reply = {"path": words[-1]}
        else:
            reply = _plan(request, user)
        return fake.Reply(content=json.dumps(reply))

    return respond


# ---------------------------------------------------------------- the judge
def _text(outcome: Any) -> tuple[str, list[str]]:
    plan = outcome.plan
    if plan is None:
        return "", []
    commands = [c.command for c in [*plan.necessary_checks, *plan.command_plan]]
    return f"{plan.analysis}\n{plan.notes_for_user}", commands


def right(number: int, distro: str, outcome: Any) -> bool:
    """Whether the answer to request ``number`` (1-based) is right on this machine."""
    notes, commands = _text(outcome)
    run = "\n".join(commands)
    arch = distro == "arch"
    checks: dict[int, bool] = {
        1: ("Memory:" in notes and "Disks:" in notes)
        or ("memory" in notes.lower() and "%" in notes),
        2: ("6.12.1-arch1-1" if arch else "6.1.0-27-amd64") in notes,
        3: ADDRESS in notes,
        4: "3 days" in notes or "72" in notes,
        5: USER in notes,
        6: ":22" in notes or "0.0.0.0:22" in notes,
        7: "bluetooth.service" in notes,
        8: "kitty" in notes or "firefox" in notes,
        9: f"du -xh -d1 {HOME}" in run and "vacuum" not in notes,
        10: "smartctl" in run or "smartmontools" in notes,
        11: ("already installed" in notes) if arch else "apt-get install -y htop" in run,
        12: ("paccache -rk2" in run) if arch else "apt-get clean" in run,
        13: ("pacman -Syu" in run) if arch else "apt-get upgrade -y" in run,
        14: "systemctl restart NetworkManager.service" in run,
        15: ("sshd.service" in run) if arch else ("ssh.service" in run),
        16: "No firewall is installed" in notes,
        17: "What should ll run?" in notes or "alias ll='ls -la'" in run,
        18: "fjord.png" in run,
        19: HOME in run and ("du " in run or "find " in run),
        20: "tar -xzf" in notes or "tar -xzf" in run or "tar xzf" in notes,
    }
    return checks[number]


def ask(planner: Planner, request: str, snapshot: Telemetry) -> tuple[Any, str]:
    """The outcome (or None) and what the person got, in a word."""
    try:
        outcome = planner.plan(request, telemetry=snapshot.model_copy(deep=True))
    except AnnaError as exc:
        return None, f"error {exc.code}"
    if outcome.template:
        return outcome, f"template {outcome.template}"
    return outcome, "model"


def run(mode: str, distro: str) -> list[dict[str, Any]]:
    """Every request once in ``mode`` (offline or scripted) on the ``distro`` machine."""
    server = None
    url = "http://127.0.0.1:9"
    if mode == "scripted":
        server = _fakellm().FakeLLM(models=("scripted",)).start()
        server.responder = scripted()
        url = server.openai_url
    state = Path(tempfile.mkdtemp(prefix="anna-first-hour-"))
    settings = load_settings(llm_provider="openai", llm_url=url, llm_model="scripted",
                             state_dir=state, llm_connect_timeout=0.5)
    planner = Planner(settings, daemon=None)
    rows = []
    try:
        for number, request in enumerate(FIRST_HOUR, start=1):
            outcome, got = ask(planner, request, machine(distro))
            ok = outcome is not None and right(number, distro, outcome)
            rows.append({"n": number, "request": request, "got": got, "right": ok})
    finally:
        planner.close()
        if server is not None:
            server.stop()
        shutil.rmtree(state, ignore_errors=True)  # nothing of the bench stays in /tmp
    return rows


def main() -> int:
    """Print the table of each mode and machine, and the totals."""
    code = os.environ.get("ANNA_CODE") or "this checkout"
    totals = []
    for distro in ("arch", "debian"):
        for mode in ("offline", "scripted"):
            rows = run(mode, distro)
            print(f"\n{distro}, {mode} (code: {code})")
            for r in rows:
                print(f"{r['n']:2}. {r['request'][:44]:44} {'right' if r['right'] else '-':5} "
                      f"{r['got']}")
            score = sum(r["right"] for r in rows)
            totals.append(f"{distro:6} {mode:8} {score}/{len(rows)} right")
    print("\n" + "\n".join(totals))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
