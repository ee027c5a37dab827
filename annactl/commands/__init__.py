"""Client commands (export, fleet, queue): each module is one command's body."""
