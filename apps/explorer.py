"""rbmviz explorer — ``panel serve apps/explorer.py`` (from an installed wheel:
``rbmviz explore``).

Thin on purpose: the app is the package :mod:`rbmviz.app` (tabs, sidebar, help pages), the
engines are in :mod:`rbmviz.live`.  Bokeh clears the served script's globals when a session
ends; nothing here is used by a training thread.
"""
from rbmviz.app.layout import serve_app

serve_app()
