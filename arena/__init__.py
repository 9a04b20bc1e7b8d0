"""Grosstarock Arena: a rules engine and referee for the Grosstarock family of tarot games."""

__version__ = "0.1.0"
