"""The scripted judge, now public as :mod:`docevals_mlflow.judges.testing`.

Kept for the test modules outside ``tests/judges`` that still import it from here;
new tests import ``docevals_mlflow.judges.testing`` directly.
"""

from __future__ import annotations

from docevals_mlflow.judges.testing import ScriptedAdapter, answer

__all__ = ["ScriptedAdapter", "answer"]
