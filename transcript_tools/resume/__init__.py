"""`tt resume`, `tt chat` and `query()`: the QueryEngine (`engine`), the assembly of a resume
(`setup`), what it restores (`state`), and the tools it runs (`tools/`).
"""
