"""`tt redact`: secret detectors (`rules`), applied to every string (`core`); the file side
is `files`.
"""
