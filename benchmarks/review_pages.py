"""How fast the review app shows pages and loads a large folder (issue 20's targets:
a 50-page PDF's page in <= 300 ms after the first render; 1,000 documents' review
files loaded in <= 1 s).

Over HTTP through the app (Starlette's TestClient: the app's routing, guard and
caches, no socket), for a generated 50-page PDF at zoom 1.5:

* first page, first render (the document opened and rendered; nothing cached);
* another page, first render (what turning a page costs when it was never shown);
* a page again (the memory cache);
* a page in a new server (a restart: the disk cache under ``.docevals-cache/``);

then the queue page of ``--documents`` generated review files (first load: every
review file and layer read; again: unchanged files are not re-read).

    python benchmarks/review_pages.py [--pages 50] [--documents 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docevals_mlflow.reviewapp import create_app
from tests.reviewapp.documents import make_review

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette 1.x prefers "httpx2"; httpx works the same
    from starlette.testclient import TestClient

BASE_URL = "http://127.0.0.1:8765"


def _client(folder: Path) -> TestClient:
    return TestClient(create_app(folder, person="bench"), base_url=BASE_URL)


def _ms(client: TestClient, url: str) -> float:
    start = time.perf_counter()
    reply = client.get(url)
    elapsed = (time.perf_counter() - start) * 1000
    assert reply.status_code == 200, reply.text
    return elapsed


def pages(pages: int, repeat: int) -> None:
    rows: dict[str, list[float]] = {}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as temporary:
            folder = Path(temporary)
            make_review(folder, "long", pages=pages)
            url = "/page/long.review.json?source=long.pdf&zoom=1.5&page="
            client = _client(folder)
            client.get("/doc/long.review.json")  # what opening the page does first
            rows.setdefault("page 1, first render", []).append(_ms(client, url + "1"))
            rows.setdefault(f"page {pages}, first render", []).append(_ms(client, url + str(pages)))
            rows.setdefault(f"page {pages}, again (memory)", []).append(
                _ms(client, url + str(pages))
            )
            restarted = _client(folder)
            restarted.get("/doc/long.review.json")
            rows.setdefault(f"page {pages}, new server (disk)", []).append(
                _ms(restarted, url + str(pages))
            )
    print(f"{pages}-page PDF, zoom 1.5, median of {repeat} (ms):")
    for name, values in rows.items():
        print(f"  {name:<32} {median(values):8.1f}   (best {min(values):.1f})")


def folder_load(documents: int) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        start = time.perf_counter()
        for number in range(documents):
            make_review(folder / f"part-{number // 100:02d}", f"doc-{number:04d}", pdf=False)
        made = time.perf_counter() - start
        client = _client(folder)
        first = _ms(client, "/")
        again = _ms(client, "/")
        print(f"{documents} review files (made in {made:.1f} s):")
        print(f"  queue page, first load           {first:8.1f} ms")
        print(f"  queue page, again (unchanged)    {again:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    pages(args.pages, args.repeat)
    folder_load(args.documents)


if __name__ == "__main__":
    main()
