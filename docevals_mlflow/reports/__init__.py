"""Renderings of reports (JSON and Markdown) and writing them to disk."""
