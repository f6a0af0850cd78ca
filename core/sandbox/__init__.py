"""The sandbox: how ``bash``, background jobs, hook commands and opted-in stdio servers run
confined.

Modules: :mod:`.confinement` (the policy: modes, detection, the exec helper's confinement,
what a confined call created), :mod:`.guarded` (the files a confined call must not change and
watching them), :mod:`.hiding` (files and variables the sandbox hides), :mod:`.netproxy`
(the per-session proxy that lets a confined call reach only listed domains) and
:mod:`.sandboxsettings` (the ``sandbox`` settings section: its value, how the files and
Claude Code's combine, what the managed policy locks).

A service feature *below* the kernel's tools: ``bash`` and the MCP process launcher run inside
it, so it may import only ``core.config``, ``core.secrets``, ``core.proc`` and the plain
helpers. The confinement itself is the exec helper in ``core/proc`` (``exec_helper.c``),
which every child goes through. Its section registers with the kernel (``core.config.sections``)
with a combiner (``core.config.combining``), so settings loading and the managed policy never
import this package; the sandbox's grammar that server entries share stays in the kernel
(``core.config.sandboxing``).
"""
