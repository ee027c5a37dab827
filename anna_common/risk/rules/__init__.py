"""Risk rules, one module per domain.

:mod:`anna_common.risk.rules.registry` maps programs to them."""
