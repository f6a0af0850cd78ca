"""Hooks: the user's commands run at the agent's hook points (``PreToolUse``, ``Stop``, ...).

A feature over the kernel: the loop sees it only as a :class:`core.agent.protocols.TurnHooks`,
which :class:`.loophooks.LoopHooks` implements over the user's :class:`.runner.Hooks`,
registered with the kernel's loop parts (``core.agent.loopparts``), which the composition
root in ``cli`` asks. Its settings section is
:mod:`.hooksection`, registered with the kernel, with its value (held in
``Settings.sections``, read with ``hooksection.of``) made and confined through the entry
combiner it registers (``core.config.combining``); the entries it declares are read by the
kernel before any hook runs (``core.config.hooks``: settings loading, Claude Code's files,
plugins and trust read them), and the wire contract of a hook's input and output is Claude
Code's, which the gate shares (``core.config.hookcontract``).

Modules: :mod:`.runner` (running the configured commands, confined, and reading their
answers), :mod:`.points` (one function per hook point, turning what ran into what the caller
does next), :mod:`.loophooks` (:class:`.loophooks.LoopHooks`, the hooks as the loop calls
them, registered with the kernel) and :mod:`.hooksection` (the
``hooks`` section's model, and how a matcher matches).

May import: the kernel and the sandbox (hook commands run confined); no other feature.
"""
