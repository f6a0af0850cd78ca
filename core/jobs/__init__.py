"""Background jobs: shells ``bash`` started with ``run_in_background``, followed to their end.

Modules: :mod:`.jobtable` (a session's jobs: their output ring, status, the sandbox's notes,
the end of a turn) and :mod:`.jobtools` (the model's tools over them: ``bash_output``,
``bash_kill``).

A feature over the kernel: ``bash`` and the loop see the job table only as the kernel's
:class:`core.tools.background.BackgroundJobs`, and the job tools reach a session through the
kernel's registry (:mod:`core.tools.featuretools`), so the kernel never imports this package.
"""
