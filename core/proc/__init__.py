"""Child processes: starting them so they die with codebot (:mod:`.spawn`), the exec helper
they start through (:mod:`.helper`, ``exec_helper.c``), finding and stopping descendants that
left their group (:mod:`.descendants`), the one ``/proc`` reader (:mod:`.procfs`), a short
command run to completion (:mod:`.oneshot`), and finding a command on ``PATH``
(:mod:`.lookup`).

May import: ``core``'s plain helpers only (standard library otherwise).
"""
