"""Benchmarks of rbmviz against its peers (not part of the package; see run_all.py).

``python -m bench [--quick]`` runs them all; each ``bench_*.py`` also runs alone.
"""
