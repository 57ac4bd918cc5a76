"""The data-dependent half-line scale exactly as the range-adherent Laplace paper's Section 4.1
states it -- NOT differentially private (its loss is unbounded; docs/papers.md), kept only so
that the reproduction and the verifier can show the failure.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..laws.range_laplace import (
    paper_half_line_scale_unsafe,
)
from ..laws.range_laplace_law import TruncatedLaplaceLaw, continuous_family
from ..params import (
    SENSITIVITY_RANGE,
    Interval,
    check_finite,
    check_true_scalar,
    check_values,
    supported,
)
from ..randomness import RngLike, resolve_rng
from .base import Guarantee, Mechanism, as_output


# ------------------------------------------------------------ paper Sec. 4.1 (NOT DP)
class PaperHalfLineLaplaceUnsafe(Mechanism):
    """NOT DIFFERENTIALLY PRIVATE: Croft et al. 2022 Sec. 4.1's data-dependent scale on a half-line.

    The scale sigma(t) depends on the true value's distance t to the border ((32)/(33)).  The
    paper checks the density ratio at the border only; far from the border the ratio grows
    like exp(|y|(1/sigma_2 − 1/sigma_1)), so the loss is unbounded: ``dpnoise verify``
    reports it.  The claimed guarantee is the paper's (ε), with notion "none".  Release uses
    a float inverse-CDF sampler -- reproduction only, never use it on real data.

    Supported: epsilon in [1e-05, 1000], sensitivity in [1e-280, 1e+295] (as
    :class:`Laplace`), a finite border; true values finite and <= border.
    """

    SUPPORTED = supported({"epsilon": Interval(1e-5, 1000.0), "sensitivity": SENSITIVITY_RANGE})

    def __init__(self, *, epsilon: float, sensitivity: float, border: float = 0.0) -> None:
        import warnings

        self.epsilon = self._supported("epsilon", epsilon)
        self.sensitivity = self._supported("sensitivity", sensitivity)
        self.border = check_finite("border", border)
        warnings.warn("PaperHalfLineLaplaceUnsafe is NOT differentially private "
                      "(Croft et al. 2022 Sec. 4.1); reproduction only", UserWarning,
                      stacklevel=2)
        self._freeze()

    def scale_at(self, true_value: float) -> float:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = self.border - float(true_value)
            return float(paper_half_line_scale_unsafe(max(t, 0.0), self.sensitivity,
                                                      self.epsilon))

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.epsilon, 0.0, "none",
                         "paper's claim only: NOT differentially private (loss unbounded)")

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        x = check_values("true_value", true_value, upper=self.border)  # numbers only
        source = resolve_rng(rng)
        flat = x.reshape(-1)
        u = (source.words(flat.size) >> np.uint64(11)).astype(np.float64) * 2.0**-53
        out = np.empty(flat.size)
        for i, (mu, v) in enumerate(zip(flat, u, strict=True)):
            law = TruncatedLaplaceLaw(((-math.inf, self.border),), mu, self.scale_at(mu))
            out[i] = float(law.ppf(v or 2.0**-1074))  # u = 0: not the end -inf of S
        return as_output(out.reshape(x.shape), true_value)

    def noise(self, true_value: float | None = None) -> TruncatedLaplaceLaw:
        mu = self.border if true_value is None else float(check_values(
            "true_value", check_true_scalar("true_value", true_value), upper=self.border))
        return TruncatedLaplaceLaw(((-math.inf, self.border),), mu, self.scale_at(mu))

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        """Floats up to the border (a continuous law on the half-line, sampled in float)."""
        return np.isfinite(y) & (y <= self.border)

    def privacy_model(self) -> Any:
        from ..verify import ContinuousFamily

        d, b = self.sensitivity, self.border
        pairs = [(b - d, b), (b - 2 * d, b - d), (b - d / 2, b)]
        return continuous_family(((-math.inf, b),), self.scale_at(b), pairs, ContinuousFamily,
                                 scale_of=self.scale_at)

    def __repr__(self) -> str:
        return (f"PaperHalfLineLaplaceUnsafe(epsilon={self.epsilon!r}, "
                f"sensitivity={self.sensitivity!r}, border={self.border!r})  # NOT DP")
