"""Confinement: where the file tools may reach (:mod:`.boundary`).

May import: :mod:`core.config` and what lies below it.
"""
