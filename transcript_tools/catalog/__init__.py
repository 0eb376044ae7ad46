"""`tt ls`, `tt search`, `tt stats`: sessions listed, searched and counted (`listing`,
`search`, `stats`); the file side is `files` and `files_usage`.
"""
