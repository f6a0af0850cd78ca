"""``make bench`` (``python -m tests.bench``): the speed targets of issues 6 and 15, measured.

Each target is measured against a baseline run in the same invocation (interleaved runs,
medians) and printed as a table. A benchmark, not a test: nothing asserts, it exits 0.
docs/performance.md has the method and the figures.
"""
