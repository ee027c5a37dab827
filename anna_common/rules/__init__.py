"""Risk rules, one module per domain; :mod:`anna_common.rules.registry` maps programs to them."""
