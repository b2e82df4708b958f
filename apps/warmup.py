"""``panel serve apps/explorer.py --setup apps/warmup.py``: compile the explorer's kernels in the
background as soon as the server starts (:mod:`rbmviz.live.warmup`), not at the first page."""
from rbmviz.live import warmup

warmup.start()
