"""The model API: which endpoint, model and key (:mod:`.config`), the client and one request
per turn (:mod:`.client`), how failures are understood (:mod:`.errors`), streamed turns
(:mod:`.stream`), the Responses API's wire format beside Chat Completions'
(:mod:`.responses`), images as content parts (:mod:`.images`), token estimates and context
windows (:mod:`.tokens`), and finding
local model servers (:mod:`.discovery`).

May import: :mod:`core.config` and what lies below it. ``openai`` is imported lazily.
"""
