"""Unattended recipes and the approval queue.

``model`` reads ``/etc/anna/recipes.d/*.toml``; ``gate`` decides what may run without a
person; ``run`` turns a recipe into a stored plan and runs or queues it; ``queue`` keeps
the waiting plans; ``notify`` tells the owner's desktop session that something waits.
"""
