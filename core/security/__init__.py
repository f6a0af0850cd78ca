"""Confinement: where the file tools may reach (:mod:`.boundary`), the sandbox bash and
confined servers run in (:mod:`.sandbox`), what stays read-only inside its writable paths
(:mod:`.guarded`) and what it hides from confined commands (:mod:`.hiding`).

May import: :mod:`core.config` and what lies below it.
"""
