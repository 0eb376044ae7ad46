"""`tt export` / `tt import`: the portable bundle of one session (`core`); the file side is
`files_export` and `files_import`.
"""
