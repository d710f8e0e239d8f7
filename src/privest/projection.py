"""Record-wise maps onto public sets: the L2 ball of a public radius and a public box.

Both are fixed before the data are seen, so neighbouring data sets stay neighbours after
the map (papers 001, Algorithm 3 step 1, and 004, Sec. 3). Norms are overflow-safe.
"""

from __future__ import annotations

import numpy as np

from privest.errors import ValidationError

__all__ = ["project_rows"]


# Squared norms in [_SQ_LO, _SQ_HI] are exact to a few ulps when summed directly; outside it the
# sum may have overflowed (or underflowed), and the norm is recomputed in scaled form.
_SQ_HI = 1e290
_SQ_LO = 1e-290


def project_rows(X: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Scale factors of the record-wise L2 projection Pi_R(x) = R x / max(||x||, R).

    Paper 001, Sec. 1.4 (notation).

    Returns ``(scale, outside)``: ``scale[i] = min(1, R/||x_i||)`` and the boolean mask of the
    rows that were outside the ball. Multiply rows by ``scale`` to project; the radius is public,
    so neighbouring datasets stay neighbours. Norms are overflow-safe: rows whose squared norm
    leaves the float range are rescaled by their largest entry, so a row of norm 1e200 is
    projected onto the sphere. Raises :class:`ValidationError` if an entry is NaN or inf.
    """
    sq = np.einsum("ij,ij->i", X, X)
    odd = ~(sq <= _SQ_HI)  # overflow, inf or NaN
    if radius * radius < 1e3 * _SQ_LO:  # only then can an underflowed row lie outside the ball
        odd |= sq < _SQ_LO
    norms = np.sqrt(sq)
    outside = norms > radius
    scale = np.ones(X.shape[0])
    scale[outside] = radius / norms[outside]
    if odd.any():
        rows = X[odd]
        if not np.all(np.isfinite(rows)):
            raise ValidationError(
                "X: contains NaN or inf; every record must be finite to be projected"
            )
        big = np.max(np.abs(rows), axis=1)
        unit = np.zeros_like(big)  # ||x|| / max|x_j|, in [1, sqrt(p)] (0 for a zero row)
        nz = big > 0
        unit_rows = rows[nz] / big[nz, None]
        unit[nz] = np.sqrt(np.einsum("ij,ij->i", unit_rows, unit_rows))
        with np.errstate(over="ignore"):  # a norm beyond the float range is inf: outside
            out = unit * big > radius
        s_odd = np.ones(rows.shape[0])
        s_odd[out] = (radius / big[out]) / unit[out]
        outside[odd] = out
        scale[odd] = s_odd
    return scale, outside
