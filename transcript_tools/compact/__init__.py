"""`tt compact`: plan (`plan`), summarise (`digest`, `excerpt`, `summarizers`), write in Claude
Code's compaction form (`form`); the file side is `files` and `files_read`.
"""
