"""Run once when the explorer's server starts (``panel serve --setup`` with this file, which
``rbmviz explore`` passes): compile the explorer's kernels on a background thread
(:mod:`rbmviz.live.warmup`), so that a page opened a minute later never waits for Numba.
A source checkout's warm-up script next to its served script is the same two lines."""
from rbmviz.live import warmup

warmup.start()
