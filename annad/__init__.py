"""annad: the Anna daemon (telemetry, plan storage, execution with backups and rollback)."""

__version__ = "0.1.0"
