"""What each ``annactl`` command does (the Typer surface in ``annactl.app`` calls these).
Imports ``core``, ``planning`` and ``ui``; never ``interactive`` or ``annactl.app``."""
