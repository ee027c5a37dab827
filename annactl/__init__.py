"""annactl: the Anna client (planning, confirmation, and talking to annad)."""

__version__ = "0.1.0"
