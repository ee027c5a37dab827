"""The content rules: what a file that governs access or runs code grants or runs.

One place for both judges: the command classifier (:mod:`anna_common.risk.rules.hardening`,
when a command's text carries what it writes) and the daemon's judge of a captured step's
observed change set (:mod:`annad.capture.content`, when the file is really there).
:mod:`~anna_common.risk.content.kinds` says which files, :mod:`~anna_common.risk.content.meaning`
judges their text (:mod:`~anna_common.risk.content.settings` for security settings,
:mod:`~anna_common.risk.content.code` for commands run later,
:mod:`~anna_common.risk.content.grants` for grants, search paths and trust), and
:mod:`~anna_common.risk.content.links` judges a link put where such a file belongs.
"""
