"""Provisional ground truth: generation by several models, review, signed approval."""
