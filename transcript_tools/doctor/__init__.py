"""`tt doctor`: why a session is missing from /resume (`core`), read from disk by `files`."""
