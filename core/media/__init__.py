"""What the model is shown besides text: ``images`` (recognised by their bytes, fitted under
the size cap, carried as the wire's image parts), and its settings section, ``imagelimits``
(the ``images`` key: model, parsing, defaults; ``imagelimits.of(settings)`` reads it). It sits
below both ``model`` (which sends
the parts and falls back when an endpoint refuses them) and ``tools`` (whose results carry
them), so those two stay independent of each other."""
