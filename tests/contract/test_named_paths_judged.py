"""What runs on prediction alone — a rollback command, a live step, a per-user daemon's step —
is judged on every path a file tool names, not only on the paths its write rule knows.

A captured step is judged on what it really changed; a rollback command runs live when the
person asks for the rollback (or a step fails), judged only when the plan was. ``split``,
``patch`` and the compressors had no write rule: ``sudo split SRC /etc/sudoers.d/a`` as a
rollback command was LOW and wrote a sudoers grant unobserved."""

from __future__ import annotations

import pytest

from anna_common.levels import RiskLevel
from anna_common.risk.assess import assess
from anna_common.risk.rules.base import AssessContext

CTX = AssessContext(home="/home/u")
FORMS = ("{}", "sudo {}", "env {}", "bash -c '{}'", "bash <<< '{}'", "sudo -- {}")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("command", "floor"), [
    ("split /tmp/src /etc/sudoers.d/a", RiskLevel.HIGH),
    ("patch /etc/ssh/sshd_config /tmp/x.diff", RiskLevel.HIGH),
    ("xz /etc/passwd", RiskLevel.HIGH),
    ("gzip -k /var/log/syslog.1", RiskLevel.MEDIUM),
    ("bzip2 /etc/shadow", RiskLevel.HIGH),
    ("csplit /tmp/src /x/ -f /etc/cron.d/x", RiskLevel.HIGH),
])
def test_a_system_path_a_file_tool_names_is_judged_as_written(form: str, command: str,
                                                               floor: RiskLevel) -> None:
    assert assess(form.format(command), CTX).risk >= floor


@pytest.mark.parametrize("command", ["xz -l /etc/x.xz", "gzip -dc /var/log/a.gz",
                                     "zcat /var/log/a.gz", "xz -t /etc/x.xz"])
def test_reading_forms_stay_reads(command: str) -> None:
    assert assess(command, CTX).risk == RiskLevel.INFO


@pytest.mark.parametrize("command", ["split -b 4 ~/a ~/part_", "xz ~/notes.txt",
                                     "patch ~/f ~/x.diff", "gzip -9 /tmp/x"])
def test_the_same_tools_on_your_own_files_stay_low(command: str) -> None:
    assert assess(command, CTX).risk == RiskLevel.LOW
