"""The teardown analysis: which functions can hold a teardown region (an `ast` pass), and the
neutral, typed facts about each region (a libcst pass) that the GATE1xx rules judge."""
