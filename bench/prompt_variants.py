"""Prompt examples that teach without being copied (issue 14 item 5): measure variants.

    .venv/bin/python bench/prompt_variants.py --variant fewer -- --url http://127.0.0.1:18181/v1

Runs bench/real_llm.py (the 8 requests, the real planner, no daemon, nothing executed) with
the system prompt's examples changed in this process only; the shipped prompt files are
not touched. The system message stays byte-identical across requests in every variant
(per-intent examples travel in the user message).

Variants: ``current`` (as shipped), ``fewer`` (only the short status example), ``none``
(no example), ``placeholders`` (the examples with UPPER_CASE slots instead of a concrete
path and machine), ``per-intent`` (no example in the system message; one example of the
request's kind appended to the user message).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import real_llm

from annactl.planning import grounding, prompt

_EXAMPLE = re.compile(r"\nEXAMPLE (\d)\n(.*?)(?=\nEXAMPLE \d\n|\Z)", re.DOTALL)

INTENT_EXAMPLES = {
    "package": (
        "Request: install ncdu\n"
        'Reply: {"analysis": "ncdu is not in the installed packages; pacman installs it.", '
        '"goals": ["Install ncdu"], "necessary_checks": [], "command_plan": [{"id": "s1", '
        '"description": "Install ncdu", "command": "pacman -S --needed ncdu", "risk_level": '
        '"MEDIUM", "rollback_id": "r1", "requires_confirmation": true}], "rollback_plan": '
        '[{"id": "r1", "description": "Remove ncdu", "command": "pacman -Rns ncdu"}], '
        '"notes_for_user": "I will install ncdu with pacman.", "meta": {"detection_results": '
        '{"de": null, "wm": null, "wallpaper_backends": [], "display_protocol": null}, '
        '"template_used": null, "llm_version": "anna_runtime_v3"}}'),
    "service": (
        "Request: restart sshd\n"
        'Reply: {"analysis": "sshd is a systemd service; systemctl restarts it.", "goals": '
        '["Restart sshd"], "necessary_checks": [], "command_plan": [{"id": "s1", '
        '"description": "Restart sshd", "command": "systemctl restart sshd.service", '
        '"risk_level": "MEDIUM", "rollback_id": null, "requires_confirmation": true}], '
        '"rollback_plan": [], "notes_for_user": "I will restart sshd.", "meta": '
        '{"detection_results": {"de": null, "wm": null, "wallpaper_backends": [], '
        '"display_protocol": null}, "template_used": null, "llm_version": '
        '"anna_runtime_v3"}}'),
}


def split(system: str) -> tuple[str, dict[str, str]]:
    """The system text before the examples, and the examples by number."""
    start = system.find("\nEXAMPLE 1\n")
    return system[:start], {m.group(1): m.group(2) for m in _EXAMPLE.finditer(system)}


def placeholders(text: str) -> str:
    """The examples with slots instead of one concrete machine."""
    for old, new in (("/home/user/besseggen.png", "IMAGE_PATH"), ("besseggen", "IMAGE"),
                     ("Intel Core i7-9700K", "CPU_MODEL"), ("14.4 GB of 32 GB", "USED of TOTAL"),
                     ("32 GB", "TOTAL"), ("14.4 GB", "USED"), ("1.2", "LOAD"),
                     ("45%", "MEM_PERCENT"), ("61%", "DISK_PERCENT"), ('"cores": 8', '"cores": N'),
                     ("8 cores", "N cores"), ('"total_gb": 32', '"total_gb": TOTAL'),
                     ('"used_gb": 14.4', '"used_gb": USED'), ('"percent": 45', '"percent": P'),
                     ('"percent": 61', '"percent": P')):
        text = text.replace(old, new)
    return text


def intent(request: str) -> str:
    """Which example fits the request."""
    head = request.lower().split()[0] if request.split() else ""
    if head in ("install", "remove", "uninstall", "update", "upgrade", "clean"):
        return "package"
    if head in ("restart", "start", "stop", "enable", "disable", "reload"):
        return "service"
    if "wallpaper" in request.lower() or "background" in request.lower():
        return "wallpaper"
    return "status"


def apply(variant: str) -> dict[str, Any]:
    """Patch this process's prompts for ``variant``; what was sent, for the report."""
    real = prompt.prompts()
    head, examples = split(real.text("system"))
    texts = dict(real.texts)
    extra: dict[str, str] = {}
    if variant == "fewer":
        texts["system"] = head + "\nEXAMPLE 1\n" + examples["2"]
    elif variant == "none":
        texts["system"] = head.rstrip("\n") + "\n"
    elif variant == "placeholders":
        texts["system"] = head + "".join(f"\nEXAMPLE {n}\n{placeholders(body)}"
                                         for n, body in sorted(examples.items()))
    elif variant == "per-intent":
        texts["system"] = head.rstrip("\n") + "\n"
        extra = {"wallpaper": examples["1"], "status": examples["2"], **INTENT_EXAMPLES}
    elif variant != "current":
        raise SystemExit(f"unknown variant {variant}")
    patched = prompt.PromptSet(version=f"{real.version}+{variant}", sha256=real.sha256,
                               texts=texts)
    prompt.prompts = lambda: patched  # type: ignore[assignment]
    if extra:
        original = prompt.user_message

        def user_message(request: str, **kwargs: Any) -> str:
            example = extra[intent(request)]
            return (original(request, **kwargs) + "\nAN EXAMPLE OF THIS KIND OF REQUEST "
                    "(another machine; do not copy its paths or facts):\n" + example)

        prompt.user_message = user_message
        _mark(" ".join(extra.values()), ("ncdu", "sshd"))
    if variant == "placeholders":
        _mark("", ("IMAGE_PATH", "CPU_MODEL", "USED of TOTAL"))
    return {"variant": variant, "system_bytes": len(texts["system"].encode())}


def _mark(text: str, literals: tuple[str, ...]) -> None:
    """Count copies of these example words and literals as echoes too."""
    base = grounding.examples()
    union = grounding.Examples(tokens=(*base.tokens, *grounding.words(text)),
                               literals=(*base.literals, *literals))
    grounding.examples = lambda: union  # type: ignore[assignment]


def main() -> int:
    """Patch, then run the real-model bench with the remaining arguments."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", required=True,
                        choices=("current", "fewer", "none", "placeholders", "per-intent"))
    args, rest = parser.parse_known_args()
    info = apply(args.variant)
    print(json.dumps(info), flush=True)
    sys.argv = [sys.argv[0], *[a for a in rest if a != "--"]]
    return real_llm.main()


if __name__ == "__main__":
    raise SystemExit(main())
