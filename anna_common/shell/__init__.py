"""Understanding bash: the grammar, words, assignments, wrappers and interpreters."""
