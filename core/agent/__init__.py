"""The agent: the loop (:mod:`.loop`), the session and its tool sets, the system prompt, the
context budget and compaction, saved sessions (:mod:`.history`), what a run
reports (:mod:`.events`), the approval gate (:mod:`.permissions`) and sampling.

The top layer of ``core``: may import every other part of it.
"""
