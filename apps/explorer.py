"""rbmviz explorer — ``panel serve apps/explorer.py``.

Composition only: the session logic is in ``explorer_ui.py`` beside this file, the training
engine in :mod:`rbmviz.live`, the knobs in :mod:`rbmviz.settings`, the plots in
:mod:`rbmviz.viz`.  Later tabs ("CD bias", "TAP landscape") are added through ``TABS``.
"""
import panel as pn
import holoviews as hv

from bias_tab import make_bias_tab
from explorer_ui import build
from tap_tab import make_tap_tab

pn.extension("katex", notifications=True, sizing_mode="stretch_width")
hv.extension("bokeh")

#: (title, factory(session) -> panel object) of the tabs after "Training race"
TABS = [("CD bias", make_bias_tab), ("TAP landscape", make_tap_tab)]

build(threads=1, extra_tabs=TABS).servable()
