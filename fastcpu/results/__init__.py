"""Results: values, statistics, the result types and their display (never imports the C core)."""
