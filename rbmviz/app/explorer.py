"""The script that ``rbmviz explore`` serves (``panel serve`` of this file; the page is at
``/explorer``).  Thin on purpose: Bokeh clears a served script's globals when a session ends,
so everything lives in :mod:`rbmviz.app`.  ``apps/explorer.py`` in a source checkout is the
same two lines."""
from rbmviz.app.layout import serve_app

serve_app()
