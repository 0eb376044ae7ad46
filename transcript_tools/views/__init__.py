"""Renderings for people (rich) — the only place besides ``cli`` that knows about terminals."""
