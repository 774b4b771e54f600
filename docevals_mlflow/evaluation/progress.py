"""Progress callbacks for long evaluations (judges make stages take seconds)."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int], None]
"""Called with ``(done, total)`` each time a unit of work (a case, a stage) finishes."""


class ProgressCounter:
    """Counts finished units and reports them; a no-op without a callback.

    One counter is shared by every pipeline of a batch, so the total is the batch's.
    """

    def __init__(self, callback: Progress | None, total: int) -> None:
        self.callback = callback
        self.total = total
        self.done = 0

    def start(self) -> None:
        """Report the empty state (so a bar appears before the first unit ends)."""
        if self.callback is not None:
            self.callback(0, self.total)

    def advance(self) -> None:
        """One more unit is finished."""
        self.done += 1
        if self.callback is not None:
            self.callback(self.done, self.total)
