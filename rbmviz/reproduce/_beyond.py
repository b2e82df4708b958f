"""Helpers shared by the studies beyond Sec. VII of Tramel et al. (2018)
(:mod:`.tap_adatap`, :mod:`.tap_dbm`, :mod:`.tap_fig12`): progress lines, base-rate visible
biases and their settings' docstrings (their resumable state is :mod:`._run_state`'s)."""
from __future__ import annotations

import sys

import numpy as np

__all__ = ["progress", "base_rate"]


def progress(on: bool, msg: str) -> None:
    """Print ``msg`` to standard error when ``on``.

    Parameters
    ----------
    on : bool
        Whether progress is shown.
    msg : str
        The line.
    """
    if on:
        print(msg, file=sys.stderr, flush=True)


def base_rate(X: np.ndarray, eps: float = 1e-3) -> np.ndarray:
    """Visible biases at the logits of the pixel means (clipped to [eps, 1 − eps]).

    Parameters
    ----------
    X : numpy.ndarray
        (n, n_visible) data.
    eps : float
        Clipping of the means.

    Returns
    -------
    numpy.ndarray
        (n_visible,) biases.
    """
    m = np.clip(X.mean(axis=0), eps, 1 - eps)
    return np.log(m) - np.log1p(-m)


#: the help of a study function's parameters that are not settings (the settings' help is
#: their declaration's, in the study's ``Settings`` class): ``{name: (type, text)}``
SETTINGS_DOC = {
    "state": ("str or os.PathLike", "Directory keeping the study's state after every "
                                    "evaluation, so that an interrupted study continues."),
    "data": ("numpy.ndarray", "Training rows to use instead of loading the data set (tests)."),
    "progress": ("bool", "Print progress lines to standard error."),
}

_RETURNS = """
    Returns
    -------
    tables : dict
        ``{name: pandas.DataFrame}``.
    summary : dict
        The study's summary."""


def documented(settings: type | None = None, **own: tuple[str, str]):
    """A decorator writing the ``Parameters`` and ``Returns`` sections of a study's docstring:
    one entry per parameter of its signature, from ``own`` (``name=(type, text)``), the
    declaration in ``settings`` (its type and help) or :data:`SETTINGS_DOC`.

    Parameters
    ----------
    settings : type, optional
        The study's settings class (:class:`rbmviz.reproduce._study.StudySettings`).
    **own : tuple of str
        ``(type, text)`` of the parameters documented neither there nor in
        :data:`SETTINGS_DOC`.

    Returns
    -------
    callable
        The decorator.

    Raises
    ------
    KeyError
        When a parameter is documented nowhere.
    """
    import inspect

    from ._study import _type_name
    from ._study import settings as _settings
    declared = _settings(settings) if settings is not None else {}

    def decorate(func):
        lines = ["", "", "    Parameters", "    ----------"]
        for name, p in inspect.signature(func).parameters.items():
            if name in own:
                kind, text = own[name]
            elif name in declared:
                d = declared[name]
                text = (d.doc or "").strip()
                kind, text = _type_name(d), text[:1].upper() + text[1:] + "."
            else:
                kind, text = SETTINGS_DOC[name]
            star = "**" if p.kind is inspect.Parameter.VAR_KEYWORD else ""
            lines += [f"    {star}{name} : {kind}" if not star else f"    {star}{name}",
                      f"        {text}"]
        func.__doc__ = func.__doc__.rstrip() + "\n".join(lines) + "\n" + _RETURNS + "\n    "
        return func
    return decorate
