"""Hooks: the user's commands run at the agent's hook points (``PreToolUse``, ``Stop``, ...).

A feature over the kernel: the loop sees it only as a :class:`core.agent.protocols.TurnHooks`,
which :class:`.points.LoopHooks` implements over the user's :class:`.runner.Hooks`; the
composition root in ``cli`` hands it to the agent. Its settings section is
``core.config.hooks`` and the wire contract of a hook's input and output is
``core.config.hookcontract`` (both kernel-side until the settings move, issue 30).

Modules: :mod:`.runner` (running the configured commands, confined, and reading their answers)
and :mod:`.points` (one function per hook point, turning what ran into what the caller does
next, and :class:`.points.LoopHooks` for the loop).

May import: the kernel and the sandbox (hook commands run confined); no other feature.
"""
