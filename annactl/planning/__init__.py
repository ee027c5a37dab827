"""Turning a request into a validated plan: prompts, telemetry trim, templates, model adapters,
grounding checks, memory and the client's history. Imports only ``annactl.core``."""
