"""Text metrics over a batch of OCR-like pages: the time of
``docevals_mlflow.docmetrics.text.score_texts`` (normalization, character and word
edit distances, token F1, all pairs in one process, one core) and, when ``jiwer`` is
installed (the ``bench`` extra), its time and whether the corpus CER/WER agree.

Target (issue 22): CER over 1,000 pages of 3,000 characters in at most 1 s on one core.
Pages mix scripts (Latin with accents, Cyrillic, CJK, emoji); predictions carry about
``--damage`` of their characters substituted, dropped or inserted. ``--unrelated``
scores every page against an unrelated page instead (the worst case for the
edit distance: no shared diagonal).

    python benchmarks/docmetrics_text.py [--pages 1000] [--chars 3000] [--damage 0.05]
                                         [--unrelated] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import time

from docevals_mlflow.docmetrics.normalize import DEFAULT
from docevals_mlflow.docmetrics.text import score_texts

ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJéèàüößçабвгдежзий東京都請求書合計😀€.,  "


def _pages(rng: random.Random, pages: int, chars: int) -> list[str]:
    return ["".join(rng.choices(ALPHABET, k=chars)) for _ in range(pages)]


def _damaged(rng: random.Random, text: str, rate: float) -> str:
    out = list(text)
    for _ in range(int(len(out) * rate)):
        at = rng.randrange(len(out))
        roll = rng.random()
        if roll < 0.6:
            out[at] = rng.choice(ALPHABET)
        elif roll < 0.8:
            del out[at]
        else:
            out.insert(at, rng.choice(ALPHABET))
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--chars", type=int, default=3000)
    parser.add_argument("--damage", type=float, default=0.05)
    parser.add_argument("--unrelated", action="store_true")
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is shown")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    expected = _pages(rng, args.pages, args.chars)
    if args.unrelated:
        predicted = _pages(rng, args.pages, args.chars)
    else:
        predicted = [_damaged(rng, text, args.damage) for text in expected]
    score_texts(expected[:2], predicted[:2])  # imports and first-call set-up
    walls, cpus = [], []
    for _ in range(args.repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        scores = score_texts(expected, predicted)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    kind = "unrelated pages" if args.unrelated else f"damage {args.damage:g}"
    print(f"pages: {args.pages} x {args.chars} characters, {kind}")
    # CPU time is what one core spends (rapidfuzz runs with workers=1); on a shared
    # machine the wall time also counts the time other processes hold the core.
    print(
        f"docevals score_texts: {min(cpus):.3f} s CPU, {min(walls):.3f} s wall "
        f"(best of {args.repeat}; target <= 1 s on one core)"
    )
    print(f"  micro CER {scores.micro_cer:.6f}  micro WER {scores.micro_wer:.6f}")
    try:
        import jiwer
    except ImportError:
        print("jiwer: not installed (pip install -e '.[bench]')")
        return
    left = [DEFAULT.apply(text) for text in expected]
    right = [DEFAULT.apply(text) for text in predicted]
    start = time.perf_counter()
    cer, wer = jiwer.cer(left, right), jiwer.wer(left, right)
    theirs = time.perf_counter() - start
    agree = abs(cer - scores.micro_cer) <= 1e-9 and abs(wer - scores.micro_wer) <= 1e-9
    print(f"jiwer cer+wer:        {theirs:.3f} s; figures agree within 1e-9: {agree}")


if __name__ == "__main__":
    main()
