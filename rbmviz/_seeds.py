"""Independent random streams derived from one user seed (the lowest layer; numpy only)."""
from __future__ import annotations

import numpy as np

__all__ = ["stream_seed"]


def stream_seed(seed: int, purpose: str) -> int:
    """A 63-bit seed for one purpose (``"gibbs"``, ``"shuffle"``, ``"init"``, ...) derived
    from a user seed, so the different random streams of a run are independent.

    Only the first 8 bytes of ``purpose`` count."""
    tag = int.from_bytes(purpose.encode()[:8].ljust(8, b"\0"), "little")
    state = np.random.SeedSequence([int(seed), tag]).generate_state(1, np.uint64)[0]
    return int(state) & (2**63 - 1)
