"""The shared model: lines, records, the uuid chain, the session, the conversation a resume
sends, diagnostics, prices, the model lifecycle and the API's request rules.

Every module here is pure: no disk, no network, no terminal, no clock (tests/test_architecture.py).
"""
