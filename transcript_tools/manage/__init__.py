"""`tt rename`, `tt tag`, `tt delete`: the records and plans (`core`)."""
