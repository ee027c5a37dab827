"""Terminal output: inert text, plan/result rendering and confirmations.
Imports only ``annactl.core`` and ``annactl.planning``."""
