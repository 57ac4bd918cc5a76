"""Exact samplers over integers: every probability is a dyadic rational that is known exactly.

* :mod:`.alias`      -- Walker/Vose alias table with integer thresholds (finite pmf, 1 word/draw)
* :mod:`.geometric`  -- Geometric(1/2) from trailing zero bits, and the block-geometric lattice
                        distribution p(k) ∝ 2^(-k/M) used by the grid Laplace.
"""

from .alias import AliasTable, quantize_weights
from .geometric import BlockGeometric, geometric_half

__all__ = ["AliasTable", "BlockGeometric", "geometric_half", "quantize_weights"]
