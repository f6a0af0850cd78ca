"""Checkpoints and rewind: the project's files as each turn found them, and going back.

A feature over the kernel: the loop sees it only as a :class:`core.agent.protocols.TurnCheckpoints`
(``begin``, ``before_calls``, ``end``), which the composition root in ``cli`` hands to the
agent. It owns its settings section, :mod:`.checkpointing` (model, parsing, merging,
defaults; ``checkpointing.of(settings)`` reads it), registered with the kernel's registry.

Modules: :mod:`.turns` (turns, checkpoints of a session, plans and rewinding), :mod:`.shadow`
(the content-addressed object store of snapshots), :mod:`.pack` (packing loose objects into
one file) and :mod:`.restore` (writing a snapshot back into the project).

May import: the kernel (``core.agent``, ``core.tools``, ``core.model``, ``core.config``) and
below; no other feature.
"""
