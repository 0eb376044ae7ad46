"""`tt rewind`: files back to their state at a message (`core`); the file side is `files`."""
