"""Checkpoints and rewind: the project's files as each turn found them, and going back.

A feature over the kernel: the loop sees it only as a :class:`core.agent.protocols.TurnCheckpoints`
(``begin``, ``before_calls``, ``end``, ``settle``), made by :mod:`.loopcheckpoints`,
registered with the kernel's loop parts (``core.agent.loopparts``), which the composition
root in ``cli`` asks. It owns its settings section, :mod:`.checkpointing` (model, parsing, merging,
defaults; ``checkpointing.of(settings)`` reads it), registered with the kernel's registry.

Modules: :mod:`.turns` (turns, checkpoints of a session, plans and rewinding),
:mod:`.loopcheckpoints` (the session's checkpoints for the loop, registered), :mod:`.shadow`
(the content-addressed object store of snapshots), :mod:`.pack` (packing loose objects into
one file) and :mod:`.restore` (writing a snapshot back into the project).

May import: the kernel (``core.agent``, ``core.tools``, ``core.model``, ``core.config``) and
below; no other feature.
"""
