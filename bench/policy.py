"""Cost of policy evaluation per plan step (issue 13 item 2), beside the risk assessment.

One run prints, per step (CPU µs of this process, so other load on the machine does not
count; median of 5 passes over the corpus commands):
- ``assess``: Anna's risk assessment alone, cold cache (what every step costs already);
- ``subject``: the policy's parsed view of the command, cold cache;
- ``decide`` with 0, 20 and 200 rules on a prepared view;
- ``policy total``: subject (cold) + decide with 200 rules, and its ratio to ``assess``.

The caches bounded (issue 22, idle memory: a daemon keeps a bounded number of analyses;
anna_common.plan.PLAN_COMMANDS), side by side 2026-11-27, 02b6c58 and 1103206 alternately
twice, other engineers' suites beside them (load 11 then 6-8), µs/step before / after:
assess (cold) 582 / 737, 613 / 440; subject (cold) 259 / 356, 273 / 314; decide with 0 rules
4.7 / 8.0, 4.7 / 4.9; 20 rules 34 / 64, 55 / 45; 200 rules 261 / 457, 321 / 383; policy total
with 200 rules 648 / 852, 473 / 744. The noise is large (decide with 0 rules uses no bounded
cache and moved 1.7x in the first pair); what is real: the ``decide`` passes here repeat the
same 3,000 commands, whose rule-path pairs (~8,400 with 200 rules) no longer all fit the
pair cache (4,096; a plan's 150 commands need ~420), so a repeated pass now costs what a new
command costs: 1.2-1.75x for decide with 200 rules. A plan's own commands, judged twice per
submit, are all found again (tests/contract/test_cache_bounds.py).
Run: .venv/bin/python bench/policy.py
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from anna_common.plan import RiskLevel  # noqa: E402
from anna_common.policy import subject as policy_subject  # noqa: E402
from anna_common.policy.decide import Policy, decide, parse  # noqa: E402
from anna_common.policy.subject import subject  # noqa: E402
from anna_common.risk import assess as risk  # noqa: E402
from anna_common.risk.assess import AssessContext, Scope, assess  # noqa: E402
from bench.assess import commands  # noqa: E402

CONTEXT = AssessContext(distro="arch", home="/home/alice")
MAX_COMMANDS = 3000
PROGRAMS = ["pacman", "yay", "paru", "systemctl", "rm", "dd", "mkfs", "chmod", "chown", "curl",
            "wget", "ip", "nmcli", "iptables", "nft", "ufw", "mount", "umount", "useradd",
            "usermod", "passwd", "grub-install", "mkinitcpio", "reboot", "shutdown", "kill",
            "pkill", "docker", "podman", "flatpak", "snap", "pip", "npm", "cargo", "git",
            "ssh", "scp", "rsync", "tar", "crontab"]
PATHS = ["/etc/ssh/**", "/etc/sudoers.d/**", "/boot/**", "/etc/pacman.d/**", "/etc/fstab",
         "/srv/data/**", "/var/lib/postgres/**", "~/.ssh/**", "/home/*/.gnupg/**",
         "/etc/systemd/system/**", "/usr/local/bin/*", "/opt/app/**", "/etc/hosts",
         "/etc/**/resolv.conf", "/var/www/**", "/root/**", "/etc/nginx/**", "/mnt/backup/**",
         "/etc/default/grub", "~/.config/systemd/user/**"]


def rules_text(count: int) -> str:
    """``count`` rules mixing every kind: programs, argv patterns, paths, scopes, tiers."""
    out: list[str] = []
    for i in range(count):
        kind = i % 5
        action = ("deny", "ask", "allow", "ask", "deny")[i % 5]
        lines = ["[[rule]]", f'id = "r{i}"', f'action = "{action}"']
        if kind in (0, 1, 2):
            lines.append(f'program = "{PROGRAMS[i % len(PROGRAMS)]}{"" if i < 40 else i}"')
        if kind == 1:
            lines.append(f'argv = ["-{"RSUQ"[i % 4]}", "--x{i}*"]')
        if kind in (3, 4):
            base = PATHS[i % len(PATHS)]
            lines.append(f'path = "{base if i < 40 else base.replace("**", f"x{i}/**")}"')
            lines.append(f'access = "{"any" if i % 2 else "write"}"')
        if i % 7 == 0:
            lines.append('scope = "system"')
        if i % 11 == 0:
            lines.append('tier = ["MEDIUM", "HIGH"]')
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


def per_item_us(fn: Callable[[int], object], count: int, clear: Callable[[], None],
                repeats: int = 5) -> float:
    """Median µs per item over ``repeats`` passes (``clear`` runs before each pass)."""
    samples = []
    for _ in range(repeats):
        clear()
        start = time.process_time()
        for index in range(count):
            fn(index)
        samples.append((time.process_time() - start) / count * 1e6)
    return statistics.median(samples)


def main() -> int:
    items = commands()[:MAX_COMMANDS]
    verdicts = [assess(c, CONTEXT) for c in items]
    subjects = [subject(c, CONTEXT) for c in items]
    policies: dict[int, Policy] = {n: parse(rules_text(n), source="bench.toml")
                                   for n in (0, 20, 200)}

    def no_clear() -> None:
        return None

    def clear_all() -> None:
        risk._assess_cached.cache_clear()
        policy_subject._subject_cached.cache_clear()

    def tier(i: int) -> tuple[RiskLevel, Scope]:
        return verdicts[i].risk, verdicts[i].scope

    figures = {
        "assess (cold)": per_item_us(lambda i: assess(items[i], CONTEXT), len(items),
                                     clear_all),
        "subject (cold)": per_item_us(lambda i: subject(items[i], CONTEXT), len(items),
                                      clear_all),
    }
    for n, pol in policies.items():
        figures[f"decide, {n} rules"] = per_item_us(
            lambda i, p=pol: decide(p, subjects[i], *tier(i)), len(items), no_clear)
    figures["policy total, 200 rules"] = per_item_us(
        lambda i: decide(policies[200], subject(items[i], CONTEXT), *tier(i)), len(items),
        clear_all)
    counts = {a: sum(decide(policies[200], s, *tier(i)).action == a
                     for i, s in enumerate(subjects)) for a in ("deny", "ask", "allow")}
    print(f"policy evaluation per step, {len(items)} corpus commands, median of 5 passes")
    for name, value in figures.items():
        print(f"  {name:<26} {value:9.1f} µs/step")
    ratio = figures["policy total, 200 rules"] / figures["assess (cold)"]
    print(f"  policy total / assess      {ratio:9.2f} x")
    print(f"  decisions with 200 rules: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
