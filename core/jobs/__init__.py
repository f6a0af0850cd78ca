"""Background jobs: shells ``bash`` started with ``run_in_background``, followed to their end.

Modules: :mod:`.jobtable` (a session's jobs: their output ring, status, the sandbox's notes,
the end of a turn). The model's tools over them (``bash_output``, ``bash_kill``) are kernel
built-ins beside ``bash`` (``core.tools.builtin.jobtools``).

A service feature below the kernel's tools (``bash`` starts jobs): it may import the sandbox,
``core.proc`` and below.
"""
