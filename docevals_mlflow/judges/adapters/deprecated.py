"""The one place the adapters' former transport keyword arguments are still read.

Before :class:`~docevals_mlflow.judges.settings.TransportSettings`, every HTTP adapter
took its timeouts, retries, limits, extra headers and body keys and client one by one
(``timeout=``, ``client=``, ...). They are accepted for a deprecation period:
:func:`transport_settings` folds them into the settings value, with a
``DeprecationWarning`` pointing at the caller's line.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any, TypedDict

import httpx

from docevals_mlflow.judges.retry import RetryPolicy
from docevals_mlflow.judges.settings import TRANSPORT_FIELDS, Sleep, TransportSettings


class DeprecatedTransportOptions(TypedDict, total=False):
    """The fields of :class:`TransportSettings` given one by one as keyword arguments
    of an adapter: still accepted, with a ``DeprecationWarning``; pass
    ``http=TransportSettings(...)`` instead."""

    timeout: float | httpx.Timeout
    connect_timeout: float
    max_retries: int | None
    retry_policy: RetryPolicy | None
    max_concurrency: int | None
    requests_per_minute: float | None
    extra_headers: Mapping[str, str] | None
    extra_body: Mapping[str, Any] | None
    client: httpx.AsyncClient | None
    sleep: Sleep | None


_ADAPTERS_FOLDER = os.path.dirname(os.path.abspath(__file__))


def _caller_stacklevel() -> int:
    """The ``stacklevel`` that points a warning issued by the caller of this function
    at the first frame outside this folder: the user's code that built the adapter,
    however many adapter constructors forwarded the arguments on the way."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.dirname(frame.f_code.co_filename) == _ADAPTERS_FOLDER:
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def transport_settings(
    adapter: str, http: TransportSettings | None, deprecated: Mapping[str, Any]
) -> TransportSettings:
    """``http`` (default settings when ``None``) with the deprecated keyword arguments
    ``deprecated`` applied over it, warning once per call that names them.

    Raises:
        TypeError: a keyword argument no adapter takes (as Python would say it).
    """
    unknown = sorted(set(deprecated) - TRANSPORT_FIELDS)
    if unknown:
        raise TypeError(f"{adapter}() got an unexpected keyword argument {unknown[0]!r}")
    settings = http if http is not None else TransportSettings()
    if not deprecated:
        return settings
    names = ", ".join(sorted(deprecated))
    warnings.warn(
        f"{adapter}({names}=...) is deprecated: pass "
        f"http=TransportSettings({names}=...) from docevals_mlflow.judges.settings instead",
        DeprecationWarning,
        stacklevel=_caller_stacklevel(),
    )
    return dataclasses.replace(settings, **deprecated)
