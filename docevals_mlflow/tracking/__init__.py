"""MLflow integration: the only package that imports mlflow (lazily, when logging).

An evaluation becomes a run bundle (:mod:`~docevals_mlflow.tracking.bundle`) assembled
by its kind's one assembly function (:mod:`~docevals_mlflow.tracking.assembly`, from
the content and a :class:`~docevals_mlflow.tracking.options.RunOptions`), laid out as
DESIGN §4 describes (:mod:`~docevals_mlflow.tracking.layout`), which
:func:`~docevals_mlflow.tracking.runs.log_bundle` logs as one run. Every entry point
(the CLI, the ``log_*`` functions, the evaluator plugin, Spark) goes through the same
assembly function, so a run's content never depends on which one logged it.
"""
