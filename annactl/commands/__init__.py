"""annactl commands (the client re-layout moves the others here)."""
