"""MLflow integration: the only package that imports mlflow (lazily, when logging).

An evaluation becomes a run bundle (:mod:`~docevals_mlflow.tracking.bundle`) laid out
as DESIGN §4 describes (:mod:`~docevals_mlflow.tracking.layout`), which
:func:`~docevals_mlflow.tracking.runs.log_bundle` logs as one run.
"""
