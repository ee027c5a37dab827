"""anna_common: the contract shared by annad and annactl (pure: no I/O)."""

__version__ = "0.1.0"
