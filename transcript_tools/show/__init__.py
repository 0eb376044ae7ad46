"""`tt show`: a session's conversation as display items (`core`, `items`, `text`, `tree`,
`subagents`); the file side is `files`.
"""
