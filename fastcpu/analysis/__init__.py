"""Analyses of results: compare, A/B, the seed table."""
