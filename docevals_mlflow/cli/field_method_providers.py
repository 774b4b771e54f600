"""The providers behind SEMANTIC and LLM fields of ``docevals fields``: built from the
embedding and judge options, and what they used (requests, tokens, cost, fallbacks)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from docevals_mlflow.cli.judging import cost_text, judge_config, judge_runtime, options_text
from docevals_mlflow.cli.light_constants import OPENAI_BASE_URL
from docevals_mlflow.errors import ConfigurationError, InputError


class FieldMethodProviders:
    """The SEMANTIC and LLM providers the options ask for, and what they used.

    ``cache`` (``--judge-cache``) keeps the LLM method's answers on disk.
    """

    def __init__(self, embeddings: Any = None, llm: Any = None, cache: Any = None) -> None:
        # Imported here: they pull in httpx, which a purely deterministic run skips.
        from docevals_mlflow.evaluation.field_providers import field_providers

        self.embeddings = embeddings
        self.cache = cache
        self.comparators: list[Any] = []
        built = field_providers(embeddings=embeddings, llm=llm, cache=cache)
        # The same mapping, its factories wrapped: it keeps the call log, which the
        # comparison puts in the report for the documents' traces.
        self.providers = built
        for method, build in list(built.items()):
            built[method] = self._tracked(build)

    def _tracked(self, build: Any) -> Any:
        def tracked(spec: Any) -> Any:
            comparator = build(spec)
            self.comparators.append(comparator)
            return comparator

        return tracked

    def pairing_warning(self) -> str | None:
        """A warning when embeddings failed while list items were being paired (they
        were paired by text similarity instead), else ``None``."""
        fallbacks = [
            comparator
            for comparator in self.comparators
            if getattr(comparator, "pairing_fallbacks", 0)
        ]
        if not fallbacks:
            return None
        count = sum(comparator.pairing_fallbacks for comparator in fallbacks)
        return (
            f"docevals: warning: embeddings failed while pairing list items ({count} "
            f"time{'s' if count != 1 else ''}; first: {fallbacks[0].pairing_error}); those "
            "items were paired by text similarity instead, and their SEMANTIC values were "
            "compared as usual"
        )

    def usage_line(self) -> str | None:
        """``field methods: N requests, X input tokens, Y output tokens[, $Z][; K
        answers from the cache]`` or ``None`` when no provider was used.

        ``requests`` counts HTTP requests, failed ones included; the cost appears with
        ``--prices`` (marked partial when a model has no price).
        """
        from docevals_mlflow.judges.usage import total_usage

        usages = [
            comparator.usage for comparator in self.comparators if hasattr(comparator, "usage")
        ]
        if self.embeddings is not None:
            usages.append(self.embeddings.usage)
        if not usages:
            return None
        total = total_usage(usages)
        line = (
            f"field methods: {total.requests} requests, {total.input_tokens} input tokens, "
            f"{total.output_tokens} output tokens"
        ) + cost_text(total.cost_usd, partial=total.cost_is_partial)
        if self.cache is not None and self.cache.hits:
            line += f"; {self.cache.hits} answers from the cache"
        return line


def field_method_providers(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> FieldMethodProviders:
    """The SEMANTIC and LLM providers the options ask for (none by default).

    Raises:
        ConfigurationError: a key the options need is not in the environment.
    """
    runtime = judge_runtime(args, environ)
    embeddings = _embedding_client(args, os.environ if environ is None else environ, runtime)
    config = judge_config(args, environ)
    llm = runtime.judge(config).adapter if config is not None else None
    return FieldMethodProviders(embeddings, llm, cache=runtime.cache if llm is not None else None)


def _embedding_client(args: argparse.Namespace, env: Mapping[str, str], runtime: Any) -> Any:
    """The client ``--embeddings-model`` asks for, or ``None``.

    Raises:
        InputError: a bad ``--embeddings-url``, or its companions without the model.
        ConfigurationError: the key is not in the environment.
    """
    if not args.embeddings_model:
        given = [
            option
            for option, value in (
                ("--embeddings-url", args.embeddings_url),
                ("--embeddings-key-env", args.embeddings_key_env),
            )
            if value
        ]
        if given:
            raise InputError(
                f"{options_text(given)} need{'s' if len(given) == 1 else ''} --embeddings-model",
                expected="the embedding model's name",
            )
        return None
    from docevals_mlflow.judges.config import check_base_url
    from docevals_mlflow.judges.embeddings import EmbeddingClient

    url = args.embeddings_url or OPENAI_BASE_URL
    try:
        check_base_url(url)
    except ValueError as exc:
        raise InputError(f"--embeddings-url: {exc}") from None
    # An OpenAI key goes to OpenAI only, never to some other server by default.
    variable = args.embeddings_key_env or (
        "OPENAI_API_KEY" if args.embeddings_url is None else None
    )
    if variable is not None and not env.get(variable):
        raise ConfigurationError(
            f"--embeddings-model needs an API key: set {variable} in the environment"
        )
    return EmbeddingClient(
        model=args.embeddings_model,
        base_url=url,
        api_key=env.get(variable) if variable else None,
        api_key_env=None,
        prices=runtime.prices,
    )
