"""The Hungarian solver, imported on first use.

``import scipy.optimize`` pulls in most of SciPy (about a third of a second), and a
package import should not pay that when no list is ever paired.
"""

from __future__ import annotations

from typing import Any


def linear_sum_assignment(matrix: Any, *, maximize: bool = False) -> tuple[Any, Any]:
    """``scipy.optimize.linear_sum_assignment``: optimal rows and columns."""
    from scipy.optimize import linear_sum_assignment as solve

    rows, cols = solve(matrix, maximize=maximize)
    return rows, cols
