"""The Panel explorer, shipped in the wheel: ``rbmviz explore`` (or ``panel serve
apps/explorer.py`` in a source checkout) serves it.

* :mod:`rbmviz.app.layout` — the page (:func:`~rbmviz.app.layout.build`): tabs, and a sidebar
  with the controls of the active tab only;
* :mod:`rbmviz.app.race_tab`, :mod:`rbmviz.app.bias_tab`, :mod:`rbmviz.app.tap_tab` — one
  session object per tab and browser session, driving an engine of :mod:`rbmviz.live`
  (:mod:`rbmviz.app.race_export`: the race's CSV and model downloads);
* :mod:`rbmviz.app.feed` — the hand-over from a training thread to the Bokeh document;
* :mod:`rbmviz.app.help` — the help pages (``help/*.md``, package data);
* :mod:`rbmviz.app.serve` — ``rbmviz explore`` (:func:`~rbmviz.app.serve.main`).

The only part of rbmviz that imports Panel.
"""
