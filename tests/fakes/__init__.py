"""Test doubles that speak real protocols (no mocks of SDK internals)."""
