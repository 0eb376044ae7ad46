"""The QueryEngine's tools (Read, Write, Edit, Bash, Glob, Grep) and where they may go.

Tools act on the world: like `edge/`, this package may touch the disk and run processes.
"""
