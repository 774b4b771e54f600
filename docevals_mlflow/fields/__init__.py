"""Field-level comparison: schemas, comparison methods, list matching and counting."""
