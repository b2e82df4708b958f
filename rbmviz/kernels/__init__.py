"""Numba kernels: plain arrays in, plain arrays out; no classes, no I/O, no records.

* :mod:`.random` — a counter-based random stream (splitmix64): the uniform for element
  ``(row, col)`` of draw number ``counter`` depends only on ``(seed, counter, row, col)``, so
  results are bit-identical for 1 or 2 threads and across processes.
* :mod:`.gibbs` — fused sigmoid + Bernoulli draw for a batch of chains (parallel over rows),
  to be combined with a BLAS matmul; and a serial fused CD/PCD update loop for small models.
* :mod:`.binary` — products with a 0/1 left factor as sums of rows (bit-identical for any
  thread count).
* :mod:`.gemm` — the row blocks of a dense product, each one single-threaded call of numpy's
  own BLAS ``gemm``, in one parallel kernel (:func:`rbmviz._blas.matmul`).
* :mod:`.exact` — exact enumeration of the smaller layer (log Z, expected statistics),
  chunked and parallel, with Gray-code incremental updates.
* :mod:`.dc` — fused serial S-DCP / CS-DCP / CG / SSD epochs for small models (same random
  stream as the BLAS path).
* :mod:`.ais` — annealed importance sampling, chains in blocks on worker threads.
* :mod:`.bias` — exact expected CD-k updates for the CD-bias study.
* :mod:`.priors` — TAP unit priors (Bernoulli, truncated Gaussian, truncated Gauss–Bernoulli):
  log Z(B, A), f_a, f_c per unit, scalar and row-parallel.
* :mod:`.tap` — the fused elementwise half-step of TAP inference and the clustering of
  solutions.
"""
