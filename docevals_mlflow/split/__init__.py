"""Page split and classification metrics for multi-document packets."""
