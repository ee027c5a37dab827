"""``annactl mcp``: Anna as the safe hands of another agent, over the Model Context Protocol.

An MCP server on stdio (the official SDK, imported only by this command) whose tools look
(``anna_status``, ``anna_explain``, ``anna_result``, ``anna_history``), run read-only checks
(``anna_check``) and propose (``anna_propose``, ``anna_rollback``). It reaches annad exactly
as every annactl command does (:func:`annactl.core.daemon_client.connect`: the caller's
identity, the system daemon for group anna, else a per-user daemon), on the daemon's agent
routes, where the policy, the limits and the journal hold. Nothing that changes the machine
runs on an agent's call alone: a person approves it.
"""
