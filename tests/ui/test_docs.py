"""The user documentation stays in step with the code."""

from __future__ import annotations

import re
from pathlib import Path

from annactl.core.config import ClientSettings
from annactl.core.exit_codes import ExitStatus

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = REPO / "tests/ui/__snapshots__/test_tui/test_snapshot_approval_wallpaper.svg"


def test_every_setting_is_documented() -> None:
    from annad.config import DaemonSettings

    text = (REPO / "docs/configuration.md").read_text()
    for name in ClientSettings.model_fields:
        assert f"`ANNA_{name.upper()}` | `{name}`" in text, name
    for name in DaemonSettings.model_fields:
        assert f"`ANNAD_{name.upper()}` | `{name}`" in text, name


def test_every_exit_status_is_documented() -> None:
    text = (REPO / "docs/configuration.md").read_text()
    documented = {int(n) for n in re.findall(r"^\| (\d+) \|", text, flags=re.MULTILINE)}
    assert documented == {int(s) for s in ExitStatus}


def test_readme_screenshot_is_the_snapshot() -> None:
    readme = (REPO / "README.md").read_text()
    assert "](docs/tui-approval.svg)" in readme
    using = readme.index("## Using Anna")
    assert readme.index("## Run the tests") < using < readme.index("## Layout")
    # refresh with: pytest tests/ui/test_tui.py --snapshot-update, then copy the file
    assert (REPO / "docs/tui-approval.svg").read_bytes() == SNAPSHOT.read_bytes()


def test_usage_documents_every_command() -> None:
    text = (REPO / "docs/usage.md").read_text()
    for command in ("ask", "plan", "apply", "show", "history", "rollback", "status", "doctor",
                    "repl", "tui"):
        assert f"annactl {command}" in text, command
