"""Widths the views share.

Decorations (rules, panels, bars) are drawn at most `DECOR_WIDTH` columns wide: on a
terminal narrower than that they take the terminal's width; to a pipe or a file, where
text is never wrapped (`cli.common.PIPE_WIDTH`), they would otherwise span thousands of
columns.
"""

from __future__ import annotations

DECOR_WIDTH = 100
