"""Plug-in search problems and the polynomial algorithms of the seed papers."""
