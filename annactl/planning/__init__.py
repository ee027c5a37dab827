"""Planning: prompts, packets, the planner loop, memory, history, redaction, audit."""
