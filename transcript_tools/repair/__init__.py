"""`tt repair`: give back everything a crash did not physically destroy (`core`, over
`survey` → `plan` → `apply`); the file side is `files`.
"""
