"""``docevals review serve``: reviewing generated ground truth in the browser.

A local Starlette app over a review file or a folder of them: each document's pages
(rendered with pymupdf, cached) beside the proposed fields, the panel's votes and
the models' evidence, keyboard-first answers written to the person's reviewer layer
(through :mod:`docevals_mlflow.groundtruth.review_layers` only), a worst-first
queue, and an adjudication view. It binds 127.0.0.1 unless told otherwise, and then
only with a token. See docs/review-guide.md, "Reviewing in the browser".
"""

from __future__ import annotations

from docevals_mlflow.reviewapp.app import create_app
from docevals_mlflow.reviewapp.server import serve

__all__ = ["create_app", "serve"]
