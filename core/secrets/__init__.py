"""Secrets: redaction of everything printed or written (:mod:`.redact`), the one credential
heuristic (:mod:`.credentials`), whether a settings value looks like a credential
(:mod:`.scan`), and scrubbing text that arrives in pieces (:mod:`.streamscrub`).

May import: ``core``'s plain helpers and :mod:`core.proc`.
"""
