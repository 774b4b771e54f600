"""Metrics, evaluators, failure attribution, checkpoints and suites."""
