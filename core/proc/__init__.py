"""Child processes: starting them so they die with codebot (:mod:`.spawn`), finding and
stopping descendants that left their group (:mod:`.descendants`), and finding a command on
``PATH`` (:mod:`.lookup`).

May import: ``core``'s plain helpers only (standard library otherwise).
"""
