"""The pure core: references, specs, cases, fingerprints, verdicts and report models.

Nothing here imports mlflow or httpx.
"""
