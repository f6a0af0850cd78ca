"""Skills: local skill folders and skills served over MCP, named for the model and loaded.

Modules: :mod:`.skillcatalog` (the catalog: identities, handles, the prompt's section, which
served skills the user approved), :mod:`.skillload` (reading a skill: its files, its scripts,
plugins' skills) and :mod:`.skilltool` (the ``skill`` tool the model calls).

A feature over the kernel: the session sees the catalog as a
:class:`core.agent.protocols.SkillSource` and the gate as a
:class:`core.agent.protocols.SkillApprovals`. Its settings section is ``core.config.skills``.
"""
