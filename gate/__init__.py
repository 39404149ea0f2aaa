"""gate: a lint gate for async Python teardown code."""

__version__ = "0.1.0"
