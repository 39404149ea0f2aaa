"""The faults a sweep can inject, apart from the sweep so that the CLI can name them cheaply."""

FAULTS = ("cancel", "error")
