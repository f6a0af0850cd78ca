"""The model API: which endpoint, model and key (:mod:`.config`), the client and one request
per turn (:mod:`.client`), how failures are understood (:mod:`.apierrors`), streamed turns
(:mod:`.stream`), the Responses API's wire format beside Chat Completions'
(:mod:`.responses`), the cap on an answer's size (:mod:`.cap`), token estimates and
context windows (:mod:`.tokens`), and finding local model servers (:mod:`.localservers`).

May import: :mod:`core.media`, :mod:`core.config` and what lies below them. ``openai`` is
imported lazily.
"""
