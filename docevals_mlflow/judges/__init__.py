"""LLM judges: requests, checked answers, provider adapters, panels and calibration.

Only this package (and ground-truth generation through it) talks HTTP.
"""
