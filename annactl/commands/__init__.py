"""annactl subcommands (one module per command)."""
