"""The explorer race's downloads: the records as CSV (with the settings and the knob changes as
``#`` lines) and each racing rule's model as ``.npz``, named after the data set, the model's
size, the rules and the epoch they reached.

A mix-in of :class:`rbmviz.app.race_tab.ExplorerSession`, which sets ``race``, ``data`` and
``knob_log``; :meth:`RaceDownloads._init_downloads` makes the buttons' row.
"""
from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import pandas as pd
import panel as pn

from ..live.race import rule_title
from ..settings import to_dict


class RaceDownloads:
    """The download buttons of the race tab and what they hand out (a mix-in)."""

    def _init_downloads(self) -> None:
        """The CSV button and the row that holds it and the models' buttons (offered once
        there is data; one model button per racing rule, made at each Reset)."""
        self.download_csv = pn.widgets.FileDownload(callback=self._csv_bytes,
                                                    filename="rbmviz_records.csv",
                                                    label="Records, settings and knob changes (CSV)",
                                                    visible=False)
        self.downloads = pn.Row(self.download_csv, sizing_mode="stretch_width")

    def _stem(self) -> str:
        """``rbmviz_<data set>_<n_visible>x<n_hidden>``: the start of every download's name."""
        race = self.race
        rbm = race.runs[race.algorithms[0]].rbm
        return f"rbmviz_{self.data.dataset}_{rbm.n_visible}x{rbm.n_hidden}"

    def settings_dict(self) -> dict:
        """Every setting of the current race.

        Returns
        -------
        dict
            JSON-ready: ``settings`` (data, model, training: :func:`rbmviz.settings.to_dict`)
            and ``algorithms`` (each racing rule's own knobs as they run now).
        """
        race = self.race
        out = {"settings": to_dict(race.data_settings, race.model_settings, race.train_settings),
               "algorithms": {n: {k: v for k, v in race.runs[n].algorithm.settings().items()
                                  if isinstance(v, (int, float, str, bool, type(None)))}
                              for n in race.algorithms}}
        return out

    def _csv_bytes(self):
        """The records as CSV, after ``#`` lines holding the settings (JSON) and the knob
        changes (read back with ``pandas.read_csv(f, comment="#")``)."""
        race = self.race
        df = race.frame() if race is not None else pd.DataFrame()
        lines = ["# rbmviz explorer: training race records (read with pandas.read_csv(path, "
                 "comment='#'))"]
        if race is not None:
            lines.append("# settings: " + json.dumps(self.settings_dict(), default=str))
            for row in self.knob_log:
                where = ", ".join(f"{c} {row[c]:g}" for c in ("epoch", "updates") if c in row)
                lines.append(f"# knob change at {where}: {row['knob']} {row['old']} -> {row['new']}")
        return io.BytesIO(("\n".join(lines) + "\n" + df.to_csv(index=False)).encode())

    def _npz_bytes(self, name=None):
        race = self.race
        rbm = race.runs[name or race.focus].rbm
        with tempfile.TemporaryDirectory() as tmp:
            path = rbm.save(Path(tmp) / "model.npz")
            return io.BytesIO(path.read_bytes())

    def _make_downloads(self):
        """The CSV and one model file per racing rule, named after what they hold."""
        race = self.race
        buttons = [self.download_csv]
        for name in race.algorithms:
            title = rule_title(race.runs[name].algorithm)
            buttons.append(pn.widgets.FileDownload(
                callback=lambda n=name: self._npz_bytes(n), label=f"Model {title} (.npz)",
                filename=f"{self._stem()}_{name}.npz", visible=False))
        self.downloads.objects = buttons

    def _update_downloads(self):
        race = self.race
        has_data = race is not None and race.n_records > 0
        epoch = f"epoch{race.epoch:g}" if race is not None else ""
        for b in self.downloads.objects:
            b.visible = has_data
        if has_data:
            self.download_csv.filename = f"{self._stem()}_{'-'.join(race.algorithms)}_{epoch}.csv"
            for b, name in zip(self.downloads.objects[1:], race.algorithms):
                b.filename = f"{self._stem()}_{name}_{epoch}.npz"
