"""Test support for tt: the Messages-API stand-in, the pinned real Claude Code CLIs,
the scripted session generator and the resume oracle.

Nothing here is shipped; it is imported by ``tests/conftest.py`` and the tests.
"""
