"""The edge: every adapter to the world outside the pure core — the transcript reader and
writer, the Claude config dir, the Messages API client, the tokenizer, the clock, git's
worktrees, the store's database engines.
"""
