"""Anna's own risk of a command: the assessment, the write and path analyses, the rules."""
