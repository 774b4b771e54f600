"""``python -m tests.fields.stickler_diff --examples 5000``: the differential soak."""

from __future__ import annotations

import argparse
import sys
import time

from tests.fields.stickler_diff.corpus import FAMILIES, Limits
from tests.fields.stickler_diff.harness import SoakResult, format_soak, soak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fields.stickler_diff")
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--family", choices=FAMILIES, default=None)
    parser.add_argument("--max-scalar-items", type=int, default=20)
    parser.add_argument("--max-object-items", type=int, default=20)
    parser.add_argument("--no-minimise", action="store_true", help="skip shrinking examples")
    args = parser.parse_args(argv)
    limits = Limits(max_scalar_items=args.max_scalar_items, max_object_items=args.max_object_items)
    started = time.perf_counter()

    def progress(done: int, result: SoakResult) -> None:
        print(
            f"  {done} examples, {sum(result.undocumented.values())} undocumented keys "
            f"({time.perf_counter() - started:.0f} s)",
            file=sys.stderr,
        )

    result, minimal = soak(
        args.examples,
        seed=args.seed,
        family=args.family,
        limits=limits,
        minimise=not args.no_minimise,
        progress=progress,
    )
    print(format_soak(result, minimal))
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 1 if result.undocumented or result.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
