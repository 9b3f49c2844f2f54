"""The least-squares fit with non-negative coefficients that the cost models use.

A negative cost is a fitting artefact, never a finding: sweep's step costs and serve's decode
steps are both fitted here.
"""

from __future__ import annotations

import itertools

import torch


def nonnegative_least_squares(
    rows: list[list[float]], y: list[float]
) -> tuple[list[float], list[int]]:
    """min |A x - y|^2 with x >= 0, for a handful of columns.

    Every subset of columns is solved by ordinary least squares (torch.linalg.lstsq, float64,
    columns scaled to unit length) and the best solution without a negative coefficient wins.
    Returns (x, indices of the columns held at zero).
    """
    a = torch.tensor(rows, dtype=torch.float64)
    b = torch.tensor(y, dtype=torch.float64).unsqueeze(1)
    best, best_residual = None, None
    for size in range(a.shape[1], 0, -1):
        for subset in map(list, itertools.combinations(range(a.shape[1]), size)):
            norms = a[:, subset].norm(dim=0)
            if (norms == 0).any():
                continue
            solution = torch.linalg.lstsq(a[:, subset] / norms, b).solution.squeeze(1) / norms
            if (solution < 0).any():
                continue
            x = torch.zeros(a.shape[1], dtype=torch.float64)
            x[subset] = solution
            residual = float(((a @ x).unsqueeze(1) - b).square().sum())
            if best_residual is None or residual < best_residual - 1e-18:
                best, best_residual = x, residual
    held = [i for i in range(a.shape[1]) if best[i] == 0]
    return best.tolist(), held
