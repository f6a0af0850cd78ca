"""Configuration: where codebot keeps its files (:mod:`.paths`), settings (load, merge,
expand, validate; :mod:`.settings`) and the one table of their keys (:mod:`.keys`), server
entries (:mod:`.servers`, :mod:`.oauth`), editing them (:mod:`.edit`), trust for project
settings (:mod:`.trust`), and other clients' configurations (:mod:`.importers`).

May import: ``core``'s plain helpers, :mod:`core.proc` and :mod:`core.secrets`.
"""
