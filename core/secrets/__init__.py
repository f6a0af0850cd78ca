"""Secrets: redaction of everything printed or written (:mod:`.redact`), whether a settings
value looks like a credential (:mod:`.scan`), and scrubbing text that arrives in pieces
(:mod:`.stream`).

May import: ``core``'s plain helpers and :mod:`core.proc`.
"""
