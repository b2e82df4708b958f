"""Numba kernels: plain arrays in, plain arrays out; no classes, no I/O, no records.

* :mod:`.random` — a counter-based random stream (splitmix64): the uniform for element
  ``(row, col)`` of draw number ``counter`` depends only on ``(seed, counter, row, col)``, so
  results are bit-identical for 1 or 2 threads and across processes.
* :mod:`.gibbs` — fused sigmoid + Bernoulli draw for a batch of chains (parallel over rows),
  to be combined with a BLAS matmul; and a serial fused CD/PCD update loop for small models.
* :mod:`.exact` — exact enumeration of the smaller layer (log Z, expected statistics),
  chunked and parallel, with Gray-code incremental updates.
"""
