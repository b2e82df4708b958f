"""Every notebook in notebooks/ executes top to bottom without errors (a fresh kernel).

Handy for checking one notebook while editing it (``pytest tests/test_notebooks.py -k 03``).
In CI the documentation build (``tests/test_docs.py``) executes every notebook once and makes
the same checks on the rendered pages, so this module is skipped there rather than running each
notebook twice.
"""
import os
from pathlib import Path

import pytest

if os.environ.get("CI"):
    pytest.skip("CI executes the notebooks in the docs build (tests/test_docs.py)",
                allow_module_level=True)

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path):
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    # the plots really rendered (Bokeh/HoloViews output bundles are present)
    assert any("application/vnd.holoviews_exec.v0+json" in o.get("data", {}) or
               "text/html" in o.get("data", {})
               for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
