"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint, batched and cached."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from docevals_mlflow.core.secrets import url_credentials
from docevals_mlflow.errors import ConfigurationError, ProviderError
from docevals_mlflow.judges.judge import run_sync
from docevals_mlflow.judges.transport import Transport, public_url
from docevals_mlflow.judges.usage import PriceTable, Usage

Vector = np.ndarray[Any, np.dtype[np.float64]]
OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_KEY_VARIABLE = "OPENAI_API_KEY"


class EmbeddingClient:
    """Turns texts into unit vectors, each distinct text fetched once.

    Works with OpenAI and any server with the same wire format (vLLM, Ollama,
    llama.cpp, LM Studio, text-embeddings-inference). The key comes from ``api_key``
    or the environment variable named by ``api_key_env``. Without either,
    ``OPENAI_API_KEY`` is read only when ``base_url`` is OpenAI's own API root, so an
    OpenAI key is never sent to another server by default; a local server needs none.

    ``prices`` (USD per million tokens, looked up by ``openai:<model>``,
    ``openai-compatible:<model>`` or the bare model) gives ``usage.cost_usd``.
    ``usage.requests`` counts HTTP requests, retries and failed ones included.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str = OPENAI_BASE_URL,
        api_key: str | None = None,
        api_key_env: str | None = None,
        batch_size: int = 128,
        timeout: float = 60.0,
        max_retries: int | None = None,
        max_concurrency: int | None = 4,
        client: httpx.AsyncClient | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        if batch_size < 1:
            raise ConfigurationError("batch_size must be at least 1")
        self.model = model
        self.base_url = base_url.rstrip("/")
        is_openai = self.base_url == OPENAI_BASE_URL
        self.provider = "openai" if is_openai else "openai-compatible"
        variable = api_key_env or (OPENAI_KEY_VARIABLE if is_openai else None)
        self._key = api_key or (os.environ.get(variable) if variable else None)
        # The transport registers these process-wide (see core.secrets): its key and
        # the user-info of its URL never reach a report, even quoted in an error.
        secrets = [self._key, *url_credentials(self.base_url)]
        self.batch_size = batch_size
        self.prices = prices
        self.transport = Transport(
            provider="embeddings",
            endpoint=self.base_url,
            client=client,
            timeout=timeout,
            max_retries=max_retries,
            max_concurrency=max_concurrency,
            secrets=secrets,
        )
        self._vectors: dict[str, Vector] = {}
        self.usage = Usage()

    def describe(self) -> dict[str, Any]:
        """Model and endpoint (never the key)."""
        return {"model": self.model, "base_url": public_url(self.base_url, self.transport.secrets)}

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Unit vectors for ``texts`` (synchronous)."""
        return run_sync(self.aembed(texts))

    async def aembed(self, texts: Sequence[str]) -> list[Vector]:
        """Unit vectors for ``texts``; texts already seen cost nothing."""
        missing = list(dict.fromkeys(text for text in texts if text not in self._vectors))
        for start in range(0, len(missing), self.batch_size):
            await self._fetch(missing[start : start + self.batch_size])
        return [self._vectors[text] for text in texts]

    def _add_usage(self, usage: Usage) -> None:
        if self.prices is not None:
            usage = usage.model_copy(
                update={"cost_usd": self.prices.cost(self.provider, self.model, usage)}
            )
        self.usage = self.usage + usage

    async def _fetch(self, texts: list[str]) -> None:
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        try:
            response = await self.transport.send(
                "POST",
                f"{self.base_url}/embeddings",
                json_body={"model": self.model, "input": texts},
                headers=headers,
            )
        except ProviderError as exc:
            # Failed requests are requests too.
            self._add_usage(Usage(requests=max(exc.attempts, 1)))
            raise
        data = response.data if isinstance(response.data, dict) else {}
        tokens = data.get("usage", {}) if isinstance(data.get("usage"), dict) else {}
        self._add_usage(
            Usage(
                requests=response.attempts,
                input_tokens=int(tokens.get("prompt_tokens", 0) or 0),
                total_tokens=int(tokens.get("total_tokens", 0) or 0),
            )
        )
        items = data.get("data")
        if not isinstance(items, list) or len(items) != len(texts):
            raise ProviderError(
                f"embeddings endpoint returned {len(items) if isinstance(items, list) else 'no'} "
                f"vectors for {len(texts)} texts",
                provider="embeddings",
            )
        for item in sorted(items, key=lambda entry: int(entry.get("index", 0))):
            vector = np.asarray(item.get("embedding"), dtype=np.float64)
            norm = float(np.linalg.norm(vector))
            self._vectors[texts[int(item.get("index", 0))]] = vector / norm if norm else vector
