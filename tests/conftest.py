"""Shared pytest setup: every test runs against the installed (or in-place built) package."""
