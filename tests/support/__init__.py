"""Test support for tt: the Messages-API stand-in, the pinned real Claude Code CLIs,
the scripted session generator and the resume oracle; tt run in a subprocess (``cli``), the
repository's fixture paths (``paths``) and fixture staging (``trees``).

Nothing here is shipped; it is imported by ``tests/conftest.py`` and the tests.
"""
