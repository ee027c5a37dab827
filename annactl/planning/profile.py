"""Forms chosen by what the model does, not by the request's words alone (issue 39.2).

The small forms (:mod:`annactl.planning.forms`) made tiny models finish, but choosing them by
the request's words gave a capable model the small forms too: no runtime planner prompt, no
checks loop. So Anna keeps, per model (provider, server address and model name), what its
replies in the full contract did — closed or cut at the token cap, how long they took to
close, valid or not, or not closed in time — in ``state_dir/model_profiles.json``, and
chooses from that:

* a model that closes full plans within half the time budget (room left for its checks
  loop) gets the seed's runtime prompt and the full contract for every request;
* a model whose full plans are cut, invalid or slow gets the small forms sized to the
  request;
* an unknown model starts with the contract, and a request the small forms would cover
  falls back to its small form within the same budget when the contract is not closed by
  half of it (:data:`TRIAL_SHARE`) or is cut at the cap.

``llm_forms`` (``ANNA_LLM_FORMS``) pins the choice: ``contract`` or ``small``. ``annactl
doctor`` shows each known model's profile and what it gets.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FILE = "model_profiles.json"
"""The profiles' file in the state dir."""
KEEP = 8
"""Recent observations kept per model and kind (a model that improves is seen to)."""
TRIAL_SHARE = 0.5
"""The share of the budget the full contract gets before a request falls back to its small
form (and the time a full plan must close within for the model to keep the contract)."""
MAX_MODELS = 32
"""Models kept in the file (the least recently seen is dropped)."""


@dataclass
class Profile:
    """What one model's replies did (``plan``: the full contract; ``small``: small forms)."""

    key: str
    plan: list[dict[str, Any]] = field(default_factory=list)
    """Recent full-contract replies: ``{"o": closed|cut|slow, "s": seconds, "v": valid}``."""
    small: list[dict[str, Any]] = field(default_factory=list)
    """Recent small-form replies, the same shape."""
    seen: float = 0.0
    """When it was last updated (epoch seconds)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"plan": self.plan, "small": self.small, "seen": self.seen}


@dataclass(frozen=True)
class Choice:
    """The forms one request is asked in, and why."""

    kind: str
    """``contract`` (the full plan for every request) or ``small`` (forms sized to it)."""
    why: str
    """One line for the person, the trace and bench/golden.py."""
    trial: bool = False
    """Unknown model: the contract first, the small form within the budget if it fails."""


def key_of(provider: str, url: str, model: str) -> str:
    """The profile key of a model on a server."""
    return f"{provider}|{url.rstrip('/')}|{model}"


def _path(state_dir: Path) -> Path:
    return Path(state_dir) / FILE


def load_all(state_dir: Path) -> dict[str, Profile]:
    """Every stored profile (a damaged or missing file is no profiles: Anna learns again)."""
    try:
        raw = json.loads(_path(state_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    found: dict[str, Profile] = {}
    for key, entry in raw.items() if isinstance(raw, dict) else ():
        if not isinstance(entry, dict):
            continue
        found[str(key)] = Profile(key=str(key), plan=_rows(entry.get("plan")),
                                  small=_rows(entry.get("small")),
                                  seen=float(entry.get("seen") or 0.0))
    return found


def _rows(raw: Any) -> list[dict[str, Any]]:
    rows = []
    for row in raw if isinstance(raw, list) else []:
        if isinstance(row, dict) and row.get("o") in ("closed", "cut", "slow"):
            rows.append({"o": row["o"], "s": float(row.get("s") or 0.0),
                         "v": row.get("v") if isinstance(row.get("v"), bool) else None})
    return rows[-KEEP:]


def load(state_dir: Path, key: str) -> Profile:
    """The profile of ``key`` (empty when the model is unknown)."""
    return load_all(state_dir).get(key) or Profile(key=key)


def record(state_dir: Path, key: str, kind: str, outcome: str, seconds: float,
           valid: bool | None = None) -> None:
    """Add one observation (``kind`` plan or small) and write the file atomically."""
    import time

    profiles = load_all(state_dir)
    profile = profiles.get(key) or Profile(key=key)
    rows = profile.plan if kind == "plan" else profile.small
    rows.append({"o": outcome, "s": round(seconds, 2), "v": valid})
    del rows[:-KEEP]
    profile.seen = time.time()
    profiles[key] = profile
    kept = sorted(profiles.values(), key=lambda p: p.seen)[-MAX_MODELS:]
    _write(_path(state_dir), {p.key: p.to_dict() for p in kept})


def mark_valid(state_dir: Path, key: str, kind: str, valid: bool) -> None:
    """Say whether the last observation of ``kind`` held a valid reply."""
    profiles = load_all(state_dir)
    profile = profiles.get(key)
    rows = (profile.plan if kind == "plan" else profile.small) if profile else []
    if not rows or rows[-1]["o"] != "closed":
        return
    rows[-1]["v"] = valid
    assert profile is not None
    _write(_path(state_dir), {p.key: p.to_dict() for p in profiles.values()})


def _write(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".profiles-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
        Path(tmp).replace(path)
    except OSError:  # the profile is a convenience: a read-only state dir only forgets it
        return


def decide(profile: Profile, *, pin: str = "auto", budget: float = 0.0) -> Choice:
    """The forms for the next request of this model (see the module docstring)."""
    if pin in ("contract", "small"):
        return Choice(pin, f"pinned by llm_forms={pin}")
    rows = profile.plan
    if not rows:
        limit = f"{budget * TRIAL_SHARE:g} s" if budget > 0 else "in time"
        return Choice("contract", "unknown model: the full contract first, its small form if "
                      f"no full plan closes within {limit}", trial=True)
    closed = [r for r in rows if r["o"] == "closed"]
    within = budget * TRIAL_SHARE if budget > 0 else float("inf")
    in_time = [r for r in closed if r["s"] <= within and r["v"] is not False]
    median = statistics.median(r["s"] for r in closed) if closed else 0.0
    summary = (f"{len(in_time)} of the last {len(rows)} full plans closed valid within "
               f"{'half the budget' if budget > 0 else 'the timeout'}"
               + (f" (median {median:.1f} s)" if closed else ""))
    if (in_time and rows[-1] in in_time) or len(in_time) * 2 > len(rows):
        return Choice("contract", summary)
    cut = sum(r["o"] == "cut" for r in rows)
    slow = sum(r["o"] == "slow" for r in rows) + len(closed) - len(in_time)
    return Choice("small", f"{summary}: {cut} cut at the token cap, {slow} slow or invalid "
                  "— the small forms")


def describe(profile: Profile, *, pin: str = "auto", budget: float = 0.0) -> str:
    """One line for ``annactl doctor``: the model, what it did, what it gets."""
    choice = decide(profile, pin=pin, budget=budget)
    small = profile.small
    closed_small = sum(r["o"] == "closed" for r in small)
    model = profile.key.split("|")[-1]
    tail = f"; small forms: {closed_small} of {len(small)} closed" if small else ""
    return f"{model}: {choice.kind} ({choice.why}{tail})"
