"""Fixtures of the field-engine tests."""

from __future__ import annotations

import pytest

from docevals_mlflow.fields import inputs as inputs_module


@pytest.fixture(params=["kept parsed", "streamed"])
def pairing_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both pairing paths: small inputs kept parsed after indexing, large ones read
    again from the file (forced here with a budget of 0 bytes)."""
    if request.param == "streamed":
        monkeypatch.setattr(inputs_module, "KEEP_PARSED_BYTES", 0)
    return str(request.param)
