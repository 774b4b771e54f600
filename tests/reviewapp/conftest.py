"""A served review folder of three generated documents, and clients for it."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    # Starlette 1.x asks for "httpx2" instead of httpx; both work the same for these tests.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from docevals_mlflow.reviewapp import create_app
from tests.reviewapp.documents import make_review

BASE_URL = "http://127.0.0.1:8765"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "reviews"
    make_review(root, "doc-a")
    make_review(root, "doc-b", amounts=("7.00", "7.01"))
    make_review(root / "batch", "doc-c", currency="USD")
    return root


@pytest.fixture
def client_for(folder: Path) -> Callable[..., TestClient]:
    """A TestClient of the app for a person (and role, token...) on :func:`folder`."""

    def make(person: str = "ann", **options: Any) -> TestClient:
        app = create_app(options.pop("target", folder), person=person, **options)
        client = TestClient(app, base_url=BASE_URL, raise_server_exceptions=False)
        client.csrf = app.state.review.guard.csrf  # type: ignore[attr-defined]
        return client

    return make


def answer(client: TestClient, document: str, path: str, action: str, **extra: Any) -> Any:
    """POST one answer the way the page's script does."""
    return client.post(
        "/api/answer",
        json={"document": document, "path": path, "action": action, **extra},
        headers={"x-docevals-csrf": client.csrf},  # type: ignore[attr-defined]
    )
