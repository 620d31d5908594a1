"""pbem: adjudicate board games played by email or on a forum."""

__version__ = "0.1.0"
