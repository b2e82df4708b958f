"""The curated lessons of the explorer's Lessons menu, in menu order (:data:`LESSONS`).

Each lesson's phenomenon is checked by a test that runs its engine headless
(``tests/test_lessons.py``); the numbers quoted in the captions are the robust ones of those
runs.  The receptive-field lesson (``mnist-fields``) runs on MNIST when its files are there,
else on scikit-learn's 8×8 digits, and says so in its title.
"""
from __future__ import annotations

from ... import datasets as _datasets
from .lesson import Lesson

__all__ = ["LESSONS", "keys", "get"]


def _mnist_available() -> bool:
    try:
        return bool(_datasets.available("mnist"))
    except Exception:   # pragma: no cover - a broken data directory: fall back to digits
        return False


def _fields_lesson() -> Lesson:
    """Receptive fields forming: MNIST when its files are there, else scikit-learn's digits."""
    if _mnist_available():
        params = dict(dataset="mnist", limit=10_000, n_hidden=500, batch_size=100,
                      learning_rate=0.01, k=1, epochs=15, eval_every=None, dtype="float32",
                      algorithms=["pcd"], x_axis="updates", points_per_second=1)
        title = "MNIST: receptive fields forming"
        notice = (
            "At the start every hidden unit's picture (its receptive field) is grey noise.",
            "Within the first few hundred updates the noise turns into pen strokes and blobs: "
            "each hidden unit becomes a detector for a piece of a digit.",
            "The pseudo-likelihood climbs from about −185 towards −110 nats while the fields "
            "sharpen.")
    else:
        params = dict(dataset="digits", n_hidden=100, batch_size=20, learning_rate=0.01, k=1,
                      epochs=30, eval_every=None, dtype="float32", algorithms=["pcd"],
                      x_axis="updates", points_per_second=1)
        title = "Digits: receptive fields forming (MNIST files not found)"
        notice = (
            "At the start every hidden unit's picture (its receptive field) is grey noise.",
            "After a few hundred updates the noise turns into strokes and blobs: each hidden "
            "unit becomes a detector for a piece of a digit.",
            "The pseudo-likelihood climbs while the fields sharpen.")
    return Lesson(
        key="mnist-fields", title=title, tab="race", params=params, seconds=90, notice=notice,
        figure="Tramel et al. 2018, Fig. 4 (receptive fields of a trained RBM)",
        summary="PCD-1 on 784×500: the hidden units' receptive fields go from noise to strokes.",
        predict=(
            "Each hidden unit's receptive field starts as grey noise. What will it look like "
            "after a few hundred updates on handwritten digits?"),
        notebook=("03_tap_machines", "Receptive fields (Fig. 4)"))


def _lessons() -> tuple[Lesson, ...]:
    bs = dict(dataset="bars_and_stripes", D=3, n_hidden=4, batch_size=None, init="normal",
              init_scale=0.01, visible_bias="base_rate", dtype="float64")
    sb = dict(dataset="shifting_bar", N=9, B=1, n_hidden=4, batch_size=None, init="normal",
              init_scale=0.01, visible_bias="base_rate", dtype="float64")
    tap_ck = "tap-mnist-100-short-epoch"
    return (
        Lesson(
            key="cd-pcd-bars", title="CD-1 vs PCD-1, then k = 12 (Bars & Stripes)", tab="race",
            params=dict(bs, learning_rate=0.3, k=1, epochs=3000, eval_every=10, seed=0,
                        init_seed=0, algorithms=["cd", "pcd"], x_axis="epoch",
                        points_per_second=3),
            changes=((1500, {"k": 12}),),
            seconds=100,
            notice=(
                "CD-1 levels off near −4.3 nats: one Gibbs step from the data gives a biased "
                "gradient, and more epochs do not fix it.",
                "PCD-1's curve zig-zags: its chains wander behind a model that keeps moving — "
                "its jumps from point to point are 5 to 8 times CD's.",
                "At epoch 1,500 the lesson sets k = 12: CD climbs by about half a nat (to near "
                "−3.8). The bias, not the number of epochs, held it back."),
            figure="Upadhya & Sastry 2017, Fig. 2 (Bars & Stripes); Fischer & Igel 2011, Fig. 1",
            summary="The bias of CD-1, PCD's oscillation, and what k = 12 changes.",
            predict=(
                "Both rules start from the same weights and take one Gibbs step per update. Which "
                "curve ends higher by epoch 1,500 — and when the lesson gives CD twelve steps per "
                "update instead of more epochs, does it climb?"),
            notebook=("quickstart", "CD-k and PCD-k from the same initial parameters")),
        Lesson(
            key="dc-escape", title="CD vs S-DCP vs CS-DCP at equal compute (Shifting Bar)",
            tab="race",
            params=dict(sb, learning_rate=0.5, k=12, k_inner=4, epochs=2400, eval_every=10,
                        seed=0, init_seed=0, algorithms=["cd", "sdcp", "csdcp"],
                        x_axis="gibbs_steps", points_per_second=2),
            seconds=120,
            notice=(
                "All three rules start on a plateau near −3.15 nats — a model that knows only "
                "how often each pixel is on — far below the best possible −2.197.",
                "CS-DCP leaves the plateau first (around epoch 1,300), then S-DCP (around "
                "1,800); both end above −2.8.",
                "CD-12 spends the same 12 Gibbs steps per update and never leaves it."),
            figure="Upadhya & Sastry 2017, Fig. 1",
            summary="Difference-of-convex steps escape the plateau that traps CD.",
            predict=(
                "All three rules spend the same 12 Gibbs steps per update and start on the same "
                "plateau. Which leaves the plateau first — and does CD ever leave it?"),
            notebook=("02_dc_programming", "Small data sets (Figs. 1–2)")),
        Lesson(
            key="centered-vs-csdcp", title="Centered gradient vs CS-DCP (Bars & Stripes)",
            tab="race",
            params=dict(bs, learning_rate=0.3, k=12, k_inner=4, epochs=3000, eval_every=10,
                        seed=0, init_seed=0, algorithms=["cg", "csdcp"], x_axis="epoch",
                        points_per_second=3),
            seconds=100,
            notice=(
                "At epoch 300 CS-DCP is already near −4.0 nats while the centered gradient is "
                "still near −6.0.",
                "CS-DCP gets within 90 % of its best in about 500 epochs, the centered "
                "gradient needs 1,100 to 1,600.",
                "By epoch 2,000 the centered gradient has caught up: both end near −3.55 "
                "(best possible −2.64 for 14 patterns)."),
            figure="Upadhya & Sastry 2017, Fig. 2",
            summary="Both rules centre the units; the DC steps get there first.",
            predict=(
                "Both rules centre the units. Which gets near its best first, and does the slower "
                "one catch up by epoch 2,000?"),
            notebook=("02_dc_programming", "How this compares with the paper")),
        Lesson(
            key="cd-bias-k", title="The CD-k bias and its bound as k grows", tab="bias",
            params=dict(dataset="bars_and_stripes_3", n_hidden=6, k=1, learning_rate=0.1,
                        weight_decay=0.0, init_scale=0.5, seed=0, iterations_per_point=100,
                        points_per_second=4),
            changes=((10_000, {"k": 2}), (20_000, {"k": 4}), (30_000, {"k": 8})),
            seconds=100,
            notice=(
                "With k = 1 the bias grows as the weights grow (to about 0.17), and it always "
                "stays under Fischer & Igel's bound.",
                "Each time the lesson doubles k (2, 4, then 8, every 10,000 iterations) the "
                "bias and the bound step down: the bias ends near 0.06.",
                "Less bias, better model: the log-likelihood rises at each step of k."),
            figure="Fischer & Igel 2011, Fig. 1",
            summary="Exact expected CD-k: its bias, Theorem 4's bound, and k = 1, 2, 4, 8.",
            predict=(
                "The bias is the gap between CD-1's expected update and the true gradient. As "
                "training makes the weights larger, does it grow or shrink — and what happens "
                "each time k doubles?"),
            notebook=("01_cd_bias", "Change k and watch the bound move")),
        Lesson(
            key="weight-decay-bias", title="Weight decay and the CD bias", tab="bias",
            params=dict(dataset="bars_and_stripes_3", n_hidden=6, k=1, learning_rate=0.1,
                        weight_decay=0.0, init_scale=0.5, seed=0, iterations_per_point=100,
                        points_per_second=4),
            changes=((20_000, {"weight_decay": 0.005}),),
            seconds=100,
            notice=(
                "Without weight decay CD-1's weights keep growing (norm near 37) and so does "
                "its bias (near 0.2).",
                "At iteration 20,000 the lesson turns on weight decay λ = 0.005: the weights "
                "shrink to about half and the bias falls about sevenfold.",
                "The price: the model fits worse — the log-likelihood drops by about 0.4 nats."),
            figure="Fischer & Igel 2011, Sec. 4 (the bias bound grows with the weights)",
            summary="Small weights mix fast: weight decay cuts the bias, and the fit.",
            predict=(
                "Weight decay keeps the weights small, and small weights let the Gibbs chain mix "
                "faster. When it is switched on, what happens to the bias — and to the "
                "log-likelihood?"),
            notebook=("01_cd_bias", "Weight decay")),
        Lesson(
            key="lr-too-large", title="Learning rate too large: divergence stopped and explained",
            tab="race",
            params=dict(bs, learning_rate=0.3, k=1, epochs=1200, eval_every=5, seed=0,
                        init_seed=0, algorithms=["cd", "pcd"], x_axis="epoch",
                        points_per_second=4),
            changes=((600, {"learning_rate": 10.0}),),
            seconds=60,
            notice=(
                "Until epoch 600 both rules learn at η = 0.3.",
                "Then the lesson sets η = 10: within about a hundred epochs PCD's likelihood "
                "collapses, and the explorer stops that run and says why (the likelihood fell "
                "far below its best; the learning rate may be too large).",
                "CD keeps running but gets worse: its chains restart at the data, so it "
                "degrades instead of blowing up."),
            figure="no paper figure: rbmviz's divergence check (rbmviz.runs.RunDiverged)",
            summary="Too large a step: PCD blows up and is stopped with a reason.",
            predict=(
                "At η = 10, which rule do you expect to blow up: CD, whose chains restart at the "
                "data at every update, or PCD, whose chains persist?"),
            notebook=("00_tour", "Changing a knob mid-race")),
        _fields_lesson(),
        Lesson(
            key="tap-landscape-1", title="TAP landscape 1/3: after 1 epoch", tab="tap",
            params=dict(start_from=f"{tap_ck}1", dataset="mnist", limit=2000, learning_rate=0.005,
                        landscape_rows=500, landscape_every=1),
            seconds=30,
            notice=(
                "A TAP machine after one epoch of training (binary MNIST, 100 hidden units).",
                "From 500 different digits, the TAP iteration always lands on the same single "
                "solution: the landscape has one valley."),
            figure="Tramel et al. 2018, Fig. 5 (and Fig. 6)",
            summary="One epoch in: a single TAP solution.",
            predict=(
                "After one epoch of training, started from 500 different digits, how many "
                "different TAP solutions will the iteration reach?"),
            notebook=("03_tap_machines", "Counting TAP solutions")),
        Lesson(
            key="tap-landscape-10", title="TAP landscape 2/3: after 10 epochs", tab="tap",
            params=dict(start_from=f"{tap_ck}10", dataset="mnist", limit=2000,
                        learning_rate=0.005, landscape_rows=500, landscape_every=1),
            seconds=45,
            notice=(
                "The same machine after 10 epochs.",
                "The 500 digits now reach about 90 different TAP solutions: the model has "
                "carved valleys for different kinds of digits."),
            figure="Tramel et al. 2018, Fig. 5 (and Fig. 6)",
            summary="Ten epochs in: the solutions multiply.",
            predict=(
                "Ten epochs in: still one solution, a handful, or one per digit?"),
            notebook=("03_tap_machines", "Longer-trained models: the shipped checkpoints")),
        Lesson(
            key="tap-landscape-100", title="TAP landscape 3/3: after 100 epochs", tab="tap",
            params=dict(start_from=f"{tap_ck}100", dataset="mnist", limit=2000,
                        learning_rate=0.005, landscape_rows=500, landscape_every=1),
            seconds=60,
            notice=(
                "After 100 epochs the 500 digits reach more than 200 distinct TAP solutions.",
                "Epoch 1 → 10 → 100: one solution, then about 90, then over 200 — training "
                "turns one valley into a rugged landscape of many (Fig. 5)."),
            figure="Tramel et al. 2018, Fig. 5 (and Fig. 6)",
            summary="A hundred epochs in: a rugged landscape.",
            predict=(
                "After 100 epochs, do the solutions keep multiplying, or merge back into a few "
                "valleys?"),
            notebook=("03_tap_machines", "Longer-trained models: the shipped checkpoints")),
        Lesson(
            key="tap-denoising", title="Denoising: TAP vs OPE vs 1-NN as the noise grows",
            tab="tap",
            params=dict(start_from="tap-mnist-100-fixed10-epoch100", dataset="mnist",
                        limit=2000, learning_rate=0.005, landscape_rows=500,
                        landscape_every=5),
            seconds=90,
            notice=(
                "Slide p (each pixel flipped with probability p) from 0.05 up to 0.4.",
                "At p = 0.1 the TAP machine restores the digit best: MCC about 0.9, against "
                "about 0.78 for the pixel-by-pixel guess (OPE) and 0.69 for the nearest "
                "training image (1-NN).",
                "As p grows to 0.3 the nearest training image catches up with TAP; OPE stays "
                "last."),
            figure="Tramel et al. 2018, Fig. 8",
            summary="A trained TAP machine as a denoiser, against two baselines.",
            predict=(
                "At low noise, which denoiser wins: the TAP machine, the per-pixel guess (OPE) or "
                "the nearest training image (1-NN)? And as the noise grows?"),
            notebook=("03_tap_machines", "Denoising")),
        Lesson(
            key="adatap-vs-tap", title="adaTAP vs TAP: the same training, a different cost",
            tab="tap",
            params=dict(dataset="digits", limit=1500, n_hidden=50, batch_size=100,
                        learning_rate=0.5, fixed_iter=10, inference="tap", updates_per_point=5,
                        points_per_second=2, seed=0),
            changes=((10.0, {"inference": "adatap"}),),
            seconds=60,
            notice=(
                "For 10 epochs the machine trains with TAP (Alg. 1, 10 iterations per update): "
                "the TAP log-likelihood climbs from −0.22 to about −0.16 per unit.",
                "Then the lesson switches to adaptive TAP (Alg. 3): the curve crawls — an "
                "adaTAP update takes tens of times longer, since every iteration solves a "
                "linear system for each digit.",
                "The likelihood gains nothing from the extra work: it wobbles a little below "
                "its level (it is measured with TAP's fixed points, not adaTAP's)."),
            figure="Tramel et al. 2018, Fig. 10",
            summary="Adaptive TAP's extra accuracy costs time and buys no better model here.",
            predict=(
                "Adaptive TAP solves a more accurate mean-field problem at every update. Will it "
                "learn a better model than plain TAP in the same epochs, and at what cost in "
                "time?"),
            notebook=("04_tap_beyond_rbm", "2. Fig. 10: training with TAP vs adaTAP")),
        Lesson(
            key="deep-tap", title="A deep TAP machine's two layers", tab="tap",
            params=dict(model="dbm-2", dataset="digits", limit=1500, n_hidden=100, n_hidden2=50,
                        pretrain_epochs=2, learning_rate=0.1, updates_per_point=10,
                        points_per_second=10, seed=0),
            seconds=90,
            notice=(
                "First each layer is trained alone as a TAP RBM (two epochs each), then the "
                "whole deep machine is trained jointly (App. E, Alg. 4).",
                "Two sets of pictures: layer 1's receptive fields (columns of W⁽¹⁾) and layer "
                "2's seen through layer 1 (W⁽¹⁾W⁽²⁾) — the pixel pattern each second-layer "
                "unit responds to.",
                "During joint training the TAP log-likelihood per unit climbs: from about "
                "−0.118 when it starts to about −0.105 by epoch 12."),
            figure="Tramel et al. 2018, Fig. 11",
            summary="Layer-wise pretraining, then joint TAP training of a 2-layer DBM.",
            predict=(
                "Each layer is first trained alone. Does training the two layers jointly then "
                "raise the TAP log-likelihood further?"),
            notebook=("04_tap_beyond_rbm", "3. Deep TAP machines (Appendix E)")),
    )


#: the lessons, in menu order
LESSONS: tuple[Lesson, ...] = _lessons()


def keys() -> list[str]:
    """The lessons' keys, in menu order.

    Returns
    -------
    list of str
        Keys of :data:`LESSONS`.
    """
    return [lesson.key for lesson in LESSONS]


def get(key: str) -> Lesson:
    """The lesson with key ``key``.

    Parameters
    ----------
    key : str
        A lesson key (``lesson=`` of a link).

    Returns
    -------
    Lesson
        The lesson.

    Raises
    ------
    ValueError
        For an unknown key, listing the valid ones.
    """
    for lesson in LESSONS:
        if lesson.key == key:
            return lesson
    raise ValueError(f"unknown lesson {key!r}; lessons: {', '.join(keys())}")
