"""Figures of the TAP reproduction are drawn at a readable size (rbmviz.viz.tap)."""
import numpy as np
import pytest

hv = pytest.importorskip("holoviews")

from rbmviz.tap import landscape  # noqa: E402
from rbmviz.viz import tap as vt  # noqa: E402


def _opts(el):
    return el.opts.get().kwargs


def test_solution_gallery_tiles_every_image_at_readable_size():
    rng = np.random.default_rng(0)
    imgs = rng.random((23, 12))
    g = vt.solution_gallery(imgs, (3, 4), cols=5, pixel=10, title="t", gap=1)
    grid = g.dimension_values(2, flat=False)[::-1]          # (bottom row first) -> top first
    assert grid.shape == (5 * 4 + 1, 5 * 5 + 1)             # 5 rows of 5, gutters of 1
    np.testing.assert_array_equal(grid[1:4, 1:5], imgs[0].reshape(3, 4))
    np.testing.assert_array_equal(grid[4 * 4 + 1:4 * 4 + 4, 2 * 5 + 1:2 * 5 + 5], imgs[22].reshape(3, 4))
    assert np.isnan(grid[4 * 4 + 1, 3 * 5 + 1])              # empty tiles stay blank
    o = _opts(g)
    assert o["frame_width"] >= grid.shape[1] * 10 - 1
    assert abs(o["frame_height"] / o["frame_width"] - grid.shape[0] / grid.shape[1]) < 0.02
    long = vt.solution_gallery(imgs[:2], (3, 4), title="x" * 80)   # room for a long title
    assert _opts(long)["frame_width"] >= 8 * 80
    with pytest.raises(ValueError, match="images must have shape"):
        vt.solution_gallery(imgs, (5, 5))
    with pytest.raises(ValueError, match="images is empty"):
        vt.solution_gallery(imgs[:0], (3, 4))


def test_ranked_receptive_fields_are_not_strips():
    W = np.random.default_rng(1).normal(size=(784, 30))
    lay = vt.ranked_receptive_fields(W, landscape.rank_receptive_fields(W), n=10,
                                     shape=(28, 28), title="spread")
    assert len(lay) == 2
    for panel in lay:
        o = _opts(panel)
        assert o["frame_width"] >= 5 * 28 * 3 and o["frame_height"] >= 2 * 28 * 3 - 10
