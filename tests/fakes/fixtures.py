"""Fixtures for the fake model providers (filled in with the provider clients)."""
