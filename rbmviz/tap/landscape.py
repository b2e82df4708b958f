"""The TAP free-energy landscape during training: solution counts, free-energy distributions,
Isomap maps and ranked receptive fields (Tramel et al. 2018, Sec. VII.2–3, Figs. 4–7;
the TAP theory page of the documentation).

Pure functions: arrays (or a ``TAPSolution``) in, arrays / pandas DataFrames out.  Plots of
these live in :mod:`rbmviz.viz.tap`.

* :func:`solution_statistics` / :func:`epoch_statistics` — number of unique TAP solutions
  reached from data-anchored initialisations (eqs. 37–38) and the TAP free energies
  ``𝔽_RBM`` (eq. 36) of the unique solutions; their unweighted mean is the paper's Helmholtz
  free-energy estimate (Fig. 5, red line).
* :func:`free_energy_histogram`, :func:`free_energy_kde` — the distributions drawn in Fig. 5.
* :class:`SolutionMap` — a 2-D Isomap fitted once (e.g. on the last epoch's solutions,
  ``[a^v, a^h]``) and applied to other epochs with ``transform`` so the maps are comparable
  (Fig. 6); :func:`data_solution_map` — Isomap fitted on the initialisation data with the
  converged magnetisations embedded in the same space (Fig. 7).
* :func:`receptive_field_spread` (ℓ_0.1 "norm" ``(Σ_i |W_ij|^0.1)^10``),
  :func:`mean_activation` and :func:`rank_receptive_fields` (Fig. 4).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_choice, check_float, check_int

if TYPE_CHECKING:
    import pandas
    from ..model import RBM
    from .inference import TAPSolution

__all__ = ["solution_statistics", "epoch_statistics", "free_energy_histogram",
           "free_energy_kde", "SolutionMap", "solution_features", "epoch_maps", "data_solution_map",
           "receptive_field_spread", "mean_activation", "rank_receptive_fields"]


def _as_1d(x, name):
    arr = np.asarray(x, dtype=np.float64).ravel()
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    return arr


def _as_2d(X, name):
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array (n_points, n_features), "
                         f"got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    return np.ascontiguousarray(arr)


# ---------------------------------------------------------------------------- counting

def solution_statistics(sol: TAPSolution, *, tol: float = 1e-4) -> dict:
    """Counts and free energies of the TAP solutions of one epoch (Tramel et al. 2018, Fig. 5).

    Parameters
    ----------
    sol : TAPSolution
        From ``rbmviz.tap.solve(rbm, X)`` with one data-anchored initialisation per row of X.
    tol : float
        De-duplication tolerance of ``rbmviz.tap.unique_solutions`` (max-abs difference of
        ``a^v`` and ``a^h``; default 1e-4).

    Returns
    -------
    dict
        ``n_init``, ``n_converged``, ``n_unique``, ``unique_fraction`` (unique /
        initialisations), ``free_energy`` (array, one per unique solution, eq. 36), ``counts``
        (initialisations reaching each unique solution), ``mean_free_energy`` (unweighted mean
        over unique solutions: the estimate of −ln 𝒵 used in the paper), ``labels`` (solution
        id of every initialisation, −1 if not converged), ``representatives``.
    """
    from . import unique_solutions

    u = unique_solutions(sol, tol=tol)
    fe = np.asarray(u.free_energy, dtype=np.float64)
    n_init = int(np.asarray(sol.converged).shape[0])
    return {"n_init": n_init, "n_converged": int(np.asarray(sol.converged).sum()),
            "n_unique": int(u.n_unique), "unique_fraction": u.n_unique / n_init,
            "free_energy": fe, "counts": np.asarray(u.counts),
            "mean_free_energy": float(fe.mean()) if fe.size else float("nan"),
            "labels": np.asarray(u.labels), "representatives": np.asarray(u.representatives)}


def epoch_statistics(stats_by_epoch: Mapping[int, dict]) -> "tuple[pandas.DataFrame, pandas.DataFrame]":
    """Tidy tables of :func:`solution_statistics` results over epochs.

    Parameters
    ----------
    stats_by_epoch : mapping
        ``epoch -> dict`` as returned by :func:`solution_statistics`.

    Returns
    -------
    summary : pandas.DataFrame
        One row per epoch (``epoch``, ``n_init``, ``n_converged``, ``n_unique``,
        ``unique_fraction``, ``mean_free_energy``, ``min_free_energy``, ``max_free_energy``).
    solutions : pandas.DataFrame
        One row per unique solution (``epoch``, ``solution``, ``free_energy``, ``count``).
    """
    import pandas as pd

    summary, sols = [], []
    for epoch, st in stats_by_epoch.items():
        fe = np.asarray(st["free_energy"], dtype=np.float64)
        summary.append({"epoch": epoch, "n_init": st["n_init"], "n_converged": st["n_converged"],
                        "n_unique": st["n_unique"], "unique_fraction": st["unique_fraction"],
                        "mean_free_energy": st["mean_free_energy"],
                        "min_free_energy": float(fe.min()) if fe.size else np.nan,
                        "max_free_energy": float(fe.max()) if fe.size else np.nan})
        for k, (f, n) in enumerate(zip(fe, st["counts"])):
            sols.append({"epoch": epoch, "solution": k, "free_energy": float(f), "count": int(n)})
    return (pd.DataFrame(summary),
            pd.DataFrame(sols, columns=["epoch", "solution", "free_energy", "count"]))


def free_energy_histogram(free_energy: ArrayLike, bins: int | ArrayLike = 30,
                          range: tuple[float, float] | None = None, *,
                          density: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Histogram of TAP free energies (``np.histogram`` semantics).

    A single distinct value gets one bin of width 1 centred on it.

    Parameters
    ----------
    free_energy : array_like
        The free energies.
    bins : int or array_like
        Number of bins or their edges.
    range : tuple of float, optional
        Range of the bins.
    density : bool
        Normalise to a density.

    Returns
    -------
    edges : numpy.ndarray
        Bin edges.
    heights : numpy.ndarray
        Bin heights.

    Raises
    ------
    ValueError
        If ``free_energy`` is empty or not finite.
    """
    fe = _as_1d(free_energy, "free_energy")
    if range is None and fe.min() == fe.max():
        range = (fe[0] - 0.5, fe[0] + 0.5)
    heights, edges = np.histogram(fe, bins=bins, range=range, density=density)
    return edges, heights


def free_energy_kde(free_energy: ArrayLike, grid: ArrayLike | None = None, *, n_grid: int = 200,
                    bandwidth: float | None = None,
                    weights: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian kernel density estimate of TAP free energies on a grid.

    Densities integrate to 1 over the real line (weights, if given, are normalised).

    Parameters
    ----------
    free_energy : array_like
        The free energies.
    grid : array_like, optional
        Where to evaluate; default ``n_grid`` points spanning the values plus 3 bandwidths.
    n_grid : int
        Size of the default grid.
    bandwidth : float, optional
        The kernel's standard deviation; default Scott's rule, ``1.06 σ̂ n^(−1/5)`` (a
        spread-free sample uses 1 % of ``|value|`` or 1e-3).
    weights : array_like, optional
        One non-negative weight per free energy.

    Returns
    -------
    grid : numpy.ndarray
        The grid.
    density : numpy.ndarray
        The density on it.

    Raises
    ------
    ValueError
        If the weights are negative, of the wrong length or all zero.
    """
    fe = _as_1d(free_energy, "free_energy")
    w = np.ones_like(fe) if weights is None else _as_1d(weights, "weights")
    if w.shape != fe.shape or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be non-negative, one per free energy, not all zero")
    w = w / w.sum()
    if bandwidth is None:
        mean = np.sum(w * fe)
        sd = np.sqrt(np.sum(w * (fe - mean) ** 2))
        n_eff = 1.0 / np.sum(w ** 2)
        bandwidth = 1.06 * sd * n_eff ** (-0.2)
        if bandwidth <= 0:
            bandwidth = max(1e-2 * abs(mean), 1e-3)
    bandwidth = check_float(bandwidth, "bandwidth", low=0.0, low_open=True)
    if grid is None:
        n_grid = check_int(n_grid, "n_grid", low=2)
        grid = np.linspace(fe.min() - 3 * bandwidth, fe.max() + 3 * bandwidth, n_grid)
    grid = _as_1d(grid, "grid")
    z = (grid[:, None] - fe[None, :]) / bandwidth
    dens = (np.exp(-0.5 * z * z) * w[None, :]).sum(axis=1) / (bandwidth * np.sqrt(2 * np.pi))
    return grid, dens


# ---------------------------------------------------------------------------- Isomap

def solution_features(sol: TAPSolution, rows: ArrayLike | None = None) -> np.ndarray:
    """``[a^v, a^h]``, the concatenated visible and hidden means of a ``TAPSolution``.

    The coordinates Fig. 6 embeds.

    Parameters
    ----------
    sol : TAPSolution
        The solutions.
    rows : array_like of int, optional
        Rows to keep.

    Returns
    -------
    numpy.ndarray, shape (R, n_v + n_h)
        The features.
    """
    av, ah = np.asarray(sol.av, dtype=np.float64), np.asarray(sol.ah, dtype=np.float64)
    F = np.concatenate([av, ah], axis=1)
    return F if rows is None else F[np.asarray(rows)]


class SolutionMap:
    """A 2-D (or ``n_components``-D) Isomap fitted once and applied to other point sets.

    The maps of different epochs then share one coordinate system (Fig. 6, Fig. 7).  After
    :meth:`fit`: ``embedding_`` (n_fit, n_components), ``isomap_`` (the scikit-learn
    ``Isomap``), ``n_features_``.

    Parameters
    ----------
    n_neighbors : int
        Isomap neighbourhood size (scikit-learn's default 5; the paper does not say).  Reduced
        to ``n_points − 1`` for a fit on fewer points.
    n_components : int
        Dimension of the map.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((30, 4))
    >>> m = SolutionMap().fit(X)
    >>> np.allclose(m.transform(X), m.embedding_)
    True
    """

    def __init__(self, n_neighbors: int = 5, n_components: int = 2) -> None:
        self.n_neighbors = check_int(n_neighbors, "n_neighbors", low=1)
        self.n_components = check_int(n_components, "n_components", low=1)

    def fit(self, X: ArrayLike) -> "SolutionMap":
        """Fit the Isomap on the points ``X``.

        Parameters
        ----------
        X : array_like, shape (n_points, n_features)
            The points (at least 3).

        Returns
        -------
        SolutionMap
            ``self``, fitted.

        Raises
        ------
        ValueError
            For fewer than 3 points, or points that are not finite.
        """
        from sklearn.manifold import Isomap

        X = _as_2d(X, "X")
        if X.shape[0] < 3:
            raise ValueError(f"an Isomap needs at least 3 points, got {X.shape[0]}")
        k = min(self.n_neighbors, X.shape[0] - 1)
        n_comp = min(self.n_components, X.shape[0] - 1)
        self.isomap_ = Isomap(n_neighbors=k, n_components=n_comp)
        self.embedding_ = self.isomap_.fit_transform(X)
        self.n_features_ = X.shape[1]
        return self

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Embed new points with the fitted map (geodesic distances through the fit graph).

        Parameters
        ----------
        X : array_like, shape (n_points, n_features)
            The points.

        Returns
        -------
        numpy.ndarray, shape (n_points, n_components)
            Their coordinates.

        Raises
        ------
        ValueError
            Before :meth:`fit`, or for points of another number of features.
        """
        if not hasattr(self, "isomap_"):
            raise ValueError("SolutionMap.transform() before fit()")
        X = _as_2d(X, "X")
        if X.shape[1] != self.n_features_:
            raise ValueError(f"X has {X.shape[1]} features but the map was fitted on "
                             f"{self.n_features_}")
        return self.isomap_.transform(X)

    def frame(self, X: ArrayLike, **columns: Any) -> "pandas.DataFrame":
        """``transform(X)`` as a DataFrame.

        Parameters
        ----------
        X : array_like, shape (n_points, n_features)
            The points.
        **columns
            Per-point columns to add (e.g. ``free_energy=..., epoch=...``).

        Returns
        -------
        pandas.DataFrame
            Columns ``x``, ``y`` (, ``z``...) plus ``columns``.
        """
        import pandas as pd

        E = self.transform(X)
        names = ["x", "y", "z"][:E.shape[1]] if E.shape[1] <= 3 else [f"c{i}" for i in range(E.shape[1])]
        df = pd.DataFrame(E, columns=names)
        for key, val in columns.items():
            df[key] = np.broadcast_to(np.asarray(val), (len(df),)) if np.ndim(val) == 0 else np.asarray(val)
        return df


def epoch_maps(points_by_epoch: Mapping, fit_epoch: Any, *,
               n_neighbors: int = 5) -> "tuple[SolutionMap, pandas.DataFrame]":
    """Fig. 6: one Isomap fitted on the solutions of ``fit_epoch`` and applied to every epoch.

    Parameters
    ----------
    points_by_epoch : mapping
        ``epoch -> (features, free_energy)``, e.g. the unique solutions of each epoch,
        ``solution_features(sol, u.representatives)`` and ``u.free_energy``.
    fit_epoch : object
        A key of ``points_by_epoch`` (the paper: the last epoch, 100).
    n_neighbors : int
        Isomap neighbourhood size.

    Returns
    -------
    map : SolutionMap
        The fitted map.
    frame : pandas.DataFrame
        ``epoch``, ``x``, ``y``, ``free_energy`` and ``fe_scaled`` (free energy rescaled to
        [0, 1] within each epoch, the colour scale of Fig. 6; 0.5 for an epoch whose solutions
        share one value).

    Raises
    ------
    ValueError
        If ``fit_epoch`` is not a key, or an epoch's points and free energies differ in number.
    """
    import pandas as pd

    if fit_epoch not in points_by_epoch:
        raise ValueError(f"fit_epoch {fit_epoch!r} is not among the epochs {list(points_by_epoch)}")
    F_fit, _ = points_by_epoch[fit_epoch]
    m = SolutionMap(n_neighbors=n_neighbors).fit(F_fit)
    frames = []
    for epoch, (F, fe) in points_by_epoch.items():
        fe = np.asarray(fe, dtype=np.float64).ravel()
        E = m.embedding_ if epoch == fit_epoch else m.transform(F)
        if fe.shape[0] != E.shape[0]:
            raise ValueError(f"epoch {epoch!r}: {E.shape[0]} points but {fe.shape[0]} free energies")
        span = fe.max() - fe.min()
        scaled = (fe - fe.min()) / span if span > 0 else np.full_like(fe, 0.5)
        frames.append(pd.DataFrame({"epoch": epoch, "x": E[:, 0], "y": E[:, 1],
                                    "free_energy": fe, "fe_scaled": scaled}))
    return m, pd.concat(frames, ignore_index=True)


def data_solution_map(X_init: ArrayLike, av: ArrayLike, *, n_neighbors: int = 5,
                      labels: ArrayLike | None = None, free_energy: ArrayLike | None = None
                      ) -> "tuple[SolutionMap, pandas.DataFrame]":
    """Fig. 7: an Isomap of the initialisation data with the TAP solutions embedded in it.

    A 2-D Isomap fitted on the initialisation data ``X_init`` with the visible TAP
    magnetisations ``av`` they converged to embedded in the same space (row ``r`` of ``av`` is
    the solution reached from row ``r`` of ``X_init``).

    Parameters
    ----------
    X_init : array_like, shape (R, n_visible)
        Initialisation data.
    av : array_like, shape (R, n_visible)
        The visible magnetisations reached.
    n_neighbors : int
        Isomap neighbourhood size.
    labels : array_like, shape (R,), optional
        Per-point labels (e.g. the digit).
    free_energy : array_like, shape (R,), optional
        Per-point free energies.

    Returns
    -------
    map : SolutionMap
        The fitted map.
    frame : pandas.DataFrame
        One row per initialisation: ``x``, ``y`` (the data point), ``sol_x``, ``sol_y`` (its
        solution), and ``label`` / ``free_energy`` when given.

    Raises
    ------
    ValueError
        If ``av`` does not have the shape of ``X_init``.
    """
    import pandas as pd

    X_init = _as_2d(X_init, "X_init")
    av = _as_2d(av, "av")
    if av.shape != X_init.shape:
        raise ValueError(f"av must have the shape of X_init {X_init.shape}, got {av.shape}")
    m = SolutionMap(n_neighbors=n_neighbors).fit(X_init)
    S = m.transform(av)
    df = pd.DataFrame({"x": m.embedding_[:, 0], "y": m.embedding_[:, 1],
                       "sol_x": S[:, 0], "sol_y": S[:, 1]})
    if labels is not None:
        df["label"] = np.asarray(labels)
    if free_energy is not None:
        df["free_energy"] = np.asarray(free_energy, dtype=np.float64)
    return m, df


# ---------------------------------------------------------------------------- receptive fields

def receptive_field_spread(W: ArrayLike, p: float = 0.1) -> np.ndarray:
    """ℓ_p "norm" of every receptive field (column ``W[:, j]``), ``(Σ_i |W_ij|^p)^(1/p)``.

    With ``p = 0.1`` (Fig. 4) it measures how spread out (large) or localised (small) the field
    is.  Computed in log space so that ``^(1/p)`` cannot overflow prematurely (values above
    ~1e308 are inf).

    Parameters
    ----------
    W : array_like, shape (n_visible, n_hidden)
        Weights.
    p : float
        Exponent.

    Returns
    -------
    numpy.ndarray, shape (n_hidden,)
        The spreads.
    """
    W = _as_2d(W, "W")
    p = check_float(p, "p", low=0.0, low_open=True)
    A = np.abs(W)
    with np.errstate(divide="ignore"):
        logs = p * np.log(A)                       # −inf for zero weights → term 0
    mx = logs.max(axis=0)
    safe = np.where(np.isfinite(mx), mx, 0.0)
    s = np.exp(logs - safe).sum(axis=0)
    with np.errstate(over="ignore", divide="ignore"):
        out = np.exp((safe + np.log(s)) / p)
    return np.where(np.isfinite(mx), out, 0.0)


def mean_activation(rbm: RBM, X: ArrayLike) -> np.ndarray:
    """Mean over the rows of ``X`` of each hidden unit's conditional mean.

    ``f^h_a(Σ_i W_ij x_i, 0; θ^h_j)`` (= ``σ(c_j + Σ_i W_ij x_i)`` for binary hidden units).

    Parameters
    ----------
    rbm : RBM
        The model (any hidden prior).
    X : array_like, shape (n_samples, n_visible)
        Data rows.

    Returns
    -------
    numpy.ndarray, shape (n_hidden,)
        The mean activations.

    Raises
    ------
    ValueError
        If ``X`` does not have ``n_visible`` columns.
    """
    X = _as_2d(X, "X")
    if X.shape[1] != rbm.n_visible:
        raise ValueError(f"X has {X.shape[1]} columns but the model has n_visible={rbm.n_visible}")
    W = np.asarray(rbm.W, dtype=np.float64)
    c = np.asarray(rbm.c, dtype=np.float64)
    prior = getattr(rbm, "hidden_prior", None)
    B = X @ W
    if prior is None:
        z = B + c
        P = 0.5 * (1.0 + np.tanh(0.5 * z))
    else:
        _, P, _ = prior.moments(c, B, np.zeros_like(B))
    return np.asarray(P).mean(axis=0)


def rank_receptive_fields(W: ArrayLike, *, by: str = "spread",
                          activation: ArrayLike | None = None,
                          p: float = 0.1) -> "pandas.DataFrame":
    """Hidden units ordered by receptive-field spread or by mean activation (Fig. 4).

    Parameters
    ----------
    W : array_like, shape (n_visible, n_hidden)
        Weights.
    by : {"spread", "activation"}
        The criterion.
    activation : array_like, shape (n_hidden,), optional
        From :func:`mean_activation`; required for ``by="activation"`` and added as a column
        when given.
    p : float
        Exponent of the spread "norm" (0.1).

    Returns
    -------
    pandas.DataFrame
        Sorted by the criterion, ascending (most localised / least active first), with
        columns ``unit``, ``spread`` and ``activation`` (if given), ``rank``.  Ties keep unit
        order (stable sort).

    Raises
    ------
    ValueError
        If ``activation`` is missing for ``by="activation"`` or has the wrong length.
    """
    import pandas as pd

    check_choice(by, "by", ("spread", "activation"))
    W = _as_2d(W, "W")
    df = pd.DataFrame({"unit": np.arange(W.shape[1]), "spread": receptive_field_spread(W, p)})
    if activation is not None:
        act = _as_1d(activation, "activation")
        if act.shape[0] != W.shape[1]:
            raise ValueError(f"activation must have {W.shape[1]} entries (one per hidden unit), "
                             f"got {act.shape[0]}")
        df["activation"] = act
    elif by == "activation":
        raise ValueError("by='activation' needs activation=mean_activation(rbm, X)")
    df = df.sort_values(by, kind="stable").reset_index(drop=True)
    df["rank"] = np.arange(len(df))
    return df
