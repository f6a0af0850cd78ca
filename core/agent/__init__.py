"""The kernel's agent: the loop (:mod:`.loop`) and what it stands on.

- :mod:`.session`: tool sets, history, plan mode and the before-prompt hook;
- :mod:`.prompt`: the system prompt; :mod:`.context`: the window and compaction;
  :mod:`.toolcalls`: arguments parsed, results cut and turned into messages;
- :mod:`.permissions`: the approval gate; :mod:`.approvals`: what the gate knows of skills;
- :mod:`.protocols`: what the loop and the session know of the features (hooks, checkpoints,
  skills), which the feature packages implement and ``cli`` hands in;
  :mod:`.loopparts`: the registry the features' loop parts (``TurnHooks``,
  ``TurnCheckpoints``) are made through, one feature per protocol;
- :mod:`.events`: what a run reports; :mod:`.sampling`: servers' sampling requests;
- :mod:`.history`: saved sessions; :mod:`.sessionexport`: a saved session as Markdown or JSON;
- :mod:`.outputschema`: ``chat --output-schema``.

The kernel's top: may import ``tools``, ``model`` and what lies below them, never a feature.
"""
