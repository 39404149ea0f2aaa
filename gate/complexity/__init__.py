"""The complexity ratchet: measuring (radon) and judging against the baseline are kept apart."""
