"""`tt fork`: the same conversation under a new session id (`core`, `branch`, `subagents`);
the file side is `files`.
"""
