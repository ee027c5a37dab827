"""The annad protocol: routes (no pydantic), wire models, records, previews, policy, queue.

This package imports nothing: ``annactl status`` reads :mod:`anna_common.protocol.routes` without
the pydantic models."""
