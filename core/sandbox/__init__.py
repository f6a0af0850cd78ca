"""The sandbox: how ``bash``, background jobs, hook commands and opted-in stdio servers run
confined.

Modules: :mod:`.confinement` (the policy: modes, detection, the exec helper's confinement,
what a confined call created), :mod:`.guarded` (the files a confined call must not change and
watching them), :mod:`.hiding` (files and variables the sandbox hides) and :mod:`.netproxy`
(the per-session proxy that lets a confined call reach only listed domains).

A service feature *below* the kernel's tools: ``bash`` and the MCP process launcher run inside
it, so it may import only ``core.config``, ``core.secrets``, ``core.proc`` and the plain
helpers. The confinement itself is the exec helper in ``core/proc`` (``exec_helper.c``),
which every child goes through. Its settings section is ``core.config.sandboxing``.
"""
