"""``annactl fleet run FILE --digest D [--allow-high] [--check] --json``: a fleet host's side.

The exported playbook runs this on every host with the plan it carries and the digest the
person approved. The host's own annad verifies that digest against the plan it parses
(``approved_digest`` on submit) *before* anything of the plan is previewed, stored,
checked or run: an edited playbook is refused with ``DIGEST_MISMATCH`` and nothing runs.
Then the plan runs as ``annactl apply FILE --yes [--allow-high]`` would run it.

With ``--check`` the host's annad judges the plan (``POST /v1/judge``: validation with
its own telemetry, the approved digest, its administrator's and this user's policy) and
nothing is stored or run; a plan that is HIGH here while the approval did not cover HIGH
is reported as refused too.

With ``--json`` one document is printed on every outcome: the usual apply document, or
``{"status": "refused" | "would_run", "code", "message", "digest", "approved_digest",
"requires"}``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode, PlanError
from annactl.core.exit_codes import ExitStatus, exit_status_for

if TYPE_CHECKING:
    from anna_common.plan import ActionPlan
    from annactl.commands.flow import Flow
    from annactl.ui.console import Consoles


def run(consoles: Consoles, source: str, *, digest: str, allow_high: bool, check: bool,
        as_json: bool) -> int:
    """Verify the approved digest on this host's annad, then run (or judge) the plan."""
    try:
        plan = _parsed(source)
        flow = _flow()
        if check:
            return _judge(consoles, flow, plan, digest, allow_high=allow_high,
                          as_json=as_json)
        return _apply(consoles, flow, plan, digest, allow_high=allow_high, as_json=as_json)
    except AnnaError as exc:
        if not as_json:
            raise
        from annactl.ui.console import emit_json

        emit_json(consoles, {"status": "refused", "code": str(exc.code),
                             "message": exc.message, "detail": exc.detail or {},
                             "approved_digest": digest})
        return exit_status_for(exc)


def _parsed(source: str) -> ActionPlan:
    """The plan file as an ActionPlan (the daemon validates it; here it is only read)."""
    from pydantic import ValidationError

    from anna_common.plan import ActionPlan
    from annactl.commands.contract import read_plan_text

    text = read_plan_text(source)
    try:
        return ActionPlan.model_validate(json.loads(text))
    except (ValueError, ValidationError) as exc:
        raise PlanError(f"{source} is not a plan: {str(exc)[:300]}",
                        code=ErrorCode.PLAN_INVALID) from None


def _flow() -> Flow:
    from annactl.commands.flow import connect_flow
    from annactl.core.config import load_settings

    return connect_flow(load_settings())


def _apply(consoles: Consoles, flow: Flow, plan: ActionPlan, digest: str, *,
           allow_high: bool, as_json: bool) -> int:
    from annactl.commands.ask import RunOptions, run_prepared
    from annactl.commands.prepared import Prepared

    # the daemon refuses a plan that is not the approved one before it runs any of it
    response = flow.daemon.submit(plan, request="(fleet run)", source="file",
                                  approved_digest=digest)
    prepared = Prepared(plan_id=response.plan_id, digest=response.digest,
                        annotated=response.annotated, source="file", request="(fleet run)",
                        warnings=list(response.warnings), preview=response.preview)
    return run_prepared(flow, consoles, prepared,
                        RunOptions(yes=True, allow_high=allow_high, as_json=as_json))


def _judge(consoles: Consoles, flow: Flow, plan: ActionPlan, digest: str, *,
           allow_high: bool, as_json: bool) -> int:
    from annactl.ui import confirm
    from annactl.ui.console import emit_json

    judged = flow.daemon.judge(plan, digest)
    req = confirm.requirement(judged.annotated)
    document: dict[str, Any] = {"status": "would_run", "digest": judged.digest,
                                "approved_digest": digest, "requires": str(req.tier),
                                "policy": [s.policy.model_dump(mode="json") for s in (
                                    *judged.annotated.checks, *judged.annotated.steps,
                                    *judged.annotated.rollback) if s.policy is not None]}
    status = ExitStatus.SUCCESS
    if req.tier == confirm.Tier.TWO and not allow_high:
        document.update(status="refused", code=str(ErrorCode.CONFIRMATION_REQUIRED),
                        message="the plan is HIGH on this host and the approval did not "
                                "cover HIGH; nothing would run")
        status = ExitStatus.DECLINED
    if as_json:
        emit_json(consoles, document)
    else:
        consoles.out.print(f"{document['status']}: {document.get('message', req.tier)}",
                           markup=False, highlight=False)
    return status
