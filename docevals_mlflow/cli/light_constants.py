"""Constants the ``docevals`` parser shows in its help and choices, kept here so building
the parser (``docevals --help``) imports none of the pydantic, NumPy or MLflow modules
that define them. tests/test_cli_imports.py checks each equals its source.
"""

from __future__ import annotations

# docevals_mlflow.judges.judge_config
AUTO_PROVIDERS: tuple[str, ...] = ("openai", "anthropic")
MODEL_VARIABLE = "VISUAL_EVAL_MODEL"
REASONING_EFFORT_VARIABLE = "VISUAL_EVAL_REASONING_EFFORT"
# docevals_mlflow.tracking.options
PROMPT_ARTIFACT = "specs/prompt.txt"
# docevals_mlflow.compare.statistics and docevals_mlflow.compare.results
FIELD_METRICS = ("precision", "recall", "f1", "accuracy", "far", "fdr", "macro_f1")
CASE_METRIC = "pass_rate"
# docevals_mlflow.tracking.calibration_runs
LEVELS = ("cases", "claims")
# docevals_mlflow.fields.field_spec and docevals_mlflow.fields.shapes
LIST_PAIRINGS: tuple[str, ...] = ("stickler", "strict")
DISCOVERED_POLICIES: tuple[str, ...] = ("exclude", "include")
# docevals_mlflow.groundtruth.key_loading
SIGNING_KEY_VARIABLE = "DOCEVALS_SIGNING_KEY"
PUBLIC_KEY_VARIABLE = "DOCEVALS_PUBLIC_KEY"

# docevals_mlflow.judges.embeddings: the default API root of ``--embeddings-model``
OPENAI_BASE_URL = "https://api.openai.com/v1"

# Each constant above and the module that defines it.
SOURCES = {
    "AUTO_PROVIDERS": "docevals_mlflow.judges.judge_config",
    "MODEL_VARIABLE": "docevals_mlflow.judges.judge_config",
    "REASONING_EFFORT_VARIABLE": "docevals_mlflow.judges.judge_config",
    "PROMPT_ARTIFACT": "docevals_mlflow.tracking.options",
    "FIELD_METRICS": "docevals_mlflow.compare.statistics",
    "CASE_METRIC": "docevals_mlflow.compare.results",
    "LEVELS": "docevals_mlflow.tracking.calibration_runs",
    "LIST_PAIRINGS": "docevals_mlflow.fields.field_spec",
    "DISCOVERED_POLICIES": "docevals_mlflow.fields.shapes",
    "SIGNING_KEY_VARIABLE": "docevals_mlflow.groundtruth.key_loading",
    "PUBLIC_KEY_VARIABLE": "docevals_mlflow.groundtruth.key_loading",
    "OPENAI_BASE_URL": "docevals_mlflow.judges.embeddings",
}
