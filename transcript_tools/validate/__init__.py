"""`tt validate`: every problem of a transcript as a Diagnostic (`core`), and the file side
that streams files through it (`files`).
"""
