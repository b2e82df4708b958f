"""rbmviz explorer — `panel serve apps/explorer.py`.

Foundation version: pick a toy dataset, algorithms, k, learning rate and epochs, press
"Train", and see the exact log-likelihood curves, the receptive fields and the model's
distribution over all patterns.  Training runs in the request (toy models train thousands of
epochs per second); the live, streaming explorer replaces this page (explorer issue).
"""

import numpy as np
import pandas as pd
import panel as pn
import holoviews as hv

import rbmviz
from rbmviz import evaluate, viz

pn.extension(sizing_mode="stretch_width")
hv.extension("bokeh")

TOY = {"Bars & Stripes 3×3": lambda: rbmviz.datasets.bars_and_stripes(3),
       "Shifting Bar N=9, B=1": lambda: rbmviz.datasets.shifting_bar(9, 1),
       "Diag d=6": lambda: rbmviz.datasets.diag(6),
       "1DBall d=6": lambda: rbmviz.datasets.ball_1d(6)}

dataset = pn.widgets.Select(label="Dataset", options=list(TOY))
algorithms = pn.widgets.CheckBoxGroup(label="Algorithms", value=["cd", "pcd"],
                                      options=rbmviz.algorithms.names(), inline=True)
n_hidden = pn.widgets.IntSlider(label="Hidden units", start=1, end=16, value=4)
k = pn.widgets.IntSlider(label="Gibbs steps k", start=1, end=50, value=12)
lr = pn.widgets.FloatSlider(label="Learning rate η", start=0.01, end=1.0, step=0.01, value=0.3)
epochs = pn.widgets.IntSlider(label="Epochs", start=100, end=20000, step=100, value=3000)
seed = pn.widgets.IntInput(label="Seed", value=0, start=0)
train_button = pn.widgets.Button(label="Train", color="primary")
status = pn.pane.Markdown("Press **Train**.")
curves = pn.pane.HoloViews(sizing_mode="stretch_width", min_height=320)
fields = pn.pane.HoloViews(sizing_mode="stretch_width", min_height=260)
bars = pn.pane.HoloViews(sizing_mode="stretch_width", min_height=260)


def train(_=None):
    X = TOY[dataset.value]()
    if not algorithms.value:
        status.object = "Choose at least one algorithm."
        return
    frames, last = [], None
    for name in algorithms.value:
        rbm = rbmviz.RBM(X.shape[1], n_hidden.value, seed=seed.value, data=X)
        try:
            df = rbmviz.train(rbm, X, name, epochs=epochs.value, learning_rate=lr.value, k=k.value,
                              seed=seed.value, eval_every=max(1, epochs.value // 100))
        except rbmviz.RunDiverged as err:
            status.object = f"**{name}**: {err}"
            pn.state.notifications and pn.state.notifications.error(str(err))
            return
        frames.append(df)
        last = rbm
    records = pd.concat(frames, ignore_index=True)
    best = rbmviz.datasets.max_log_likelihood(X)
    curves.object = viz.learning_curves(records, "train_ll", bound=best,
                                        title=f"exact log-likelihood (bound {best:.3f} = −ln {len(X)})")
    fields.object = viz.receptive_fields(last.W, title=f"receptive fields ({algorithms.value[-1]})")
    p_data = np.zeros(2 ** X.shape[1])
    p_data[(X.astype(np.int64) << np.arange(X.shape[1] - 1, -1, -1)).sum(1)] = 1 / len(X)
    bars.object = viz.distribution_bars(evaluate.visible_distribution(last), p_data, top=2 * len(X))
    final = records.groupby("algorithm").train_ll.last()
    status.object = " · ".join(f"**{a}** final LL {v:.3f}" for a, v in final.items())


train_button.on_click(train)

template = pn.template.FastListTemplate(
    title="rbmviz explorer",
    sidebar=[dataset, algorithms, n_hidden, k, lr, epochs, seed, train_button,
             pn.pane.Markdown("Exact log-likelihood by enumerating the smaller layer; "
                              f"the dashed line is the best achievable value, −ln(#patterns).")],
    main=[status, curves, pn.Row(fields, bars)],
)
template.servable()
