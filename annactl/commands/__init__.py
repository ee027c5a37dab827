"""annactl commands, one module per command (the client layout of issue 12)."""
