"""The explorer's engines: background threads that advance a computation one *point* at a
time and hand records to a sink (no Panel here; :mod:`rbmviz.app` draws them).

* :mod:`rbmviz.live.loop` — :class:`BackgroundLoop`, the one thread wrapper (pace, pause,
  step, stop, live knob changes, throttled delivery) every engine uses;
* :mod:`rbmviz.live.race` — :class:`Race`, several training rules racing from the same start
  (one :class:`rbmviz.runs.Run` each);
* :mod:`rbmviz.live.bias` — :class:`BiasRace`, exact expected CD-k with its bias and bounds
  (Fischer & Igel 2011);
* :mod:`rbmviz.live.tap` — :class:`TapRace`, a TAP machine with its free-energy landscape
  (Tramel et al. 2018).
"""
from .bias import BiasRace, BiasSettings
from .loop import BackgroundLoop
from .race import LIVE_KNOBS, RECORD_CHUNK, Race, RaceSettings
from .tap import TapRace, TapSettings

__all__ = ["BackgroundLoop", "Race", "RaceSettings", "LIVE_KNOBS", "RECORD_CHUNK", "BiasRace",
           "BiasSettings", "TapRace", "TapSettings"]
