"""Subagents: ``task`` runs a fresh session with its own context window and returns its answer.

Modules: :mod:`.delegation` (agent definitions, the catalog, one child run of the loop) and
:mod:`.tasktool` (the ``task`` tool the model calls).

A feature over the kernel: it runs ``core.agent.loop`` for the child and hands the parent's
loop hooks and checkpoints on through the kernel's protocols (:mod:`core.agent.protocols`),
so it imports neither hooks nor checkpoints.
"""
