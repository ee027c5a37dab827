"""The interactive front-ends, the REPL and the Textual TUI, built on ``annactl.commands``."""
