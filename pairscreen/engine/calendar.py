"""One calendar matrix for the whole universe, and pair panels cut from it by index arrays.

Aligning pair by pair (an ``np.intersect1d`` per pair) costs about 90 µs a pair, three minutes
for two million pairs. Here every asset's candles sit once on the union of all days (NaN and
``present = False`` where an asset has no candle), and a whole batch of pairs is aligned at
once: a pair's common days are ``present[a] & present[b]``, and its panel row is the last
``days`` of them. The rows hold exactly the values :func:`~pairscreen.engine.panels.align`
followed by :func:`~pairscreen.engine.panels.panel_of` would give (the same dates, the same
floats, copied), so a pair's numbers do not depend on the path that built its panel.

Windows are calendar spans (:meth:`CandleMatrix.spans`): each pair keeps the common closes of
the last ``span_days`` calendar days before its last common close, and pairs are grouped by
calendar so that a window is the same columns in every row of a panel. Pairs with a close on
each of the calendar's last ``span_days`` days (two assets that trade every day) all form one
group without any per-pair work; only the others (a leg with gaps, a pair mixing calendars,
a pair ending earlier) are grouped by their days.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import Candles, PairPanel
from pairscreen.contracts.bars import DAILY, BarSize
from pairscreen.engine.batch_panel import BatchPanel


@dataclass(frozen=True, eq=False)
class CandleMatrix:
    """Every asset's candles (daily closes, or bars of one size) on one shared calendar, one
    row per asset. A "day" of the calendar is one bar: the dates sit on the bar's numpy unit
    (``datetime64[D]`` for daily closes, ``[h]`` for hourly bars), so that a difference of
    two dates counts bars, and every span given in days is ``days * bars per day`` bars."""

    tickers: tuple[str, ...]
    calendar: np.ndarray  # (days,) datetime64 at the bar's unit, every asset's bars, sorted
    close: np.ndarray  # (assets, days) float64, NaN where the asset has no candle
    volume: np.ndarray  # (assets, days) float64, NaN where unknown or no candle
    present: np.ndarray  # (assets, days) bool: the asset has a candle that day
    bar: BarSize = DAILY

    @classmethod
    def of(
        cls, candles: Mapping[str, Candles], tickers: Sequence[str], bar: BarSize = DAILY
    ) -> CandleMatrix:
        """The matrix of ``tickers`` (each must be in ``candles``), rows in that order."""
        series = [candles[t] for t in tickers]
        unit = bar.dtype
        days = [c.dates.astype(unit) for c in series]
        calendar = np.unique(np.concatenate(days)) if days else np.empty(0, unit)
        shape = (len(series), calendar.shape[0])
        close = np.full(shape, np.nan)
        volume = np.full(shape, np.nan)
        present = np.zeros(shape, dtype=bool)
        for row, (c, d) in enumerate(zip(series, days, strict=True)):
            at = np.searchsorted(calendar, d)
            close[row, at] = c.close
            volume[row, at] = c.volume
            present[row, at] = True
        return cls(tuple(tickers), calendar, close, volume, present, bar)

    def common(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """(pairs, days) bool: the days both legs of each pair have a candle."""
        # numpy types the boolean and of untyped-dtype arrays as Any
        common: np.ndarray = self.present[ia] & self.present[ib]
        return common

    def panel(
        self, ia: np.ndarray, ib: np.ndarray, common: np.ndarray, days: int, window_days: int
    ) -> PairPanel:
        """The panel of the last ``days`` common days of each pair (every row of ``common``
        must hold at least that many)."""
        n = ia.shape[0]
        width = common.shape[1]
        if days <= width and bool(common[:, width - days :].all()):
            # Usual case: every pair has each of the last ``days`` calendar days, so rows are
            # gathered from a slice, and all rows share one (read-only) row of dates.
            cut = slice(width - days, width)
            return BatchPanel(
                a=self._names(ia),
                b=self._names(ib),
                dates=np.broadcast_to(self.calendar[cut], (n, days)),
                close_a=_leg_rows(self.close, ia, cut),
                close_b=_leg_rows(self.close, ib, cut),
                volume_a=_leg_rows(self.volume, ia, cut),
                volume_b=_leg_rows(self.volume, ib, cut),
                window_days=window_days,
                bar=self.bar,
                leg_ids=(ia, ib),
            )
        after = np.cumsum(common[:, ::-1], axis=1, dtype=np.int32)[:, ::-1]
        _, flat = np.nonzero(common & (after <= days))
        cols = flat.reshape(n, days)
        rows_a, rows_b = ia[:, None], ib[:, None]
        return BatchPanel(
            a=self._names(ia),
            b=self._names(ib),
            dates=self.calendar[cols],
            close_a=self.close[rows_a, cols],
            close_b=self.close[rows_b, cols],
            volume_a=self.volume[rows_a, cols],
            volume_b=self.volume[rows_b, cols],
            window_days=window_days,
            bar=self.bar,
            leg_ids=(ia, ib),
        )

    def _names(self, rows: np.ndarray) -> tuple[str, ...]:
        names: list[str] = np.asarray(self.tickers, dtype=object)[rows].tolist()
        return tuple(names)

    def last_common_day(self, common: np.ndarray) -> np.ndarray:
        """(pairs,) datetime64 at the bar's unit: each pair's newest common close (rows with
        at least one)."""
        last = common.shape[1] - 1 - np.argmax(common[:, ::-1], axis=1)
        # numpy types fancy indexing of an untyped-dtype array as Any
        days: np.ndarray = self.calendar[last]
        return days

    def spans(self, common: np.ndarray, span_days: int) -> Spans:
        """Each pair's calendar history (in whole days) and the closes of its last
        ``span_days`` calendar days (``span_days * bars per day`` bars), with a group per
        calendar (rows of ``common`` must have a common day)."""
        n, width = common.shape
        span = self.bar.bars(span_days)
        if n == 0:
            none = np.zeros(0, dtype=np.int64)
            return Spans(none, self.calendar[:0], common, none, none)
        cal = self.calendar
        first_i = np.argmax(common, axis=1)
        last_i = width - 1 - np.argmax(common[:, ::-1], axis=1)
        last_day = cal[last_i]
        # bars from the first common close to the last, both counted, in whole days (for
        # daily closes, calendar days; 720 hourly bars are 30 days)
        history = ((last_day - cal[first_i]).astype(np.int64) + 1) // self.bar.per_day
        keep = np.zeros_like(common)
        group = np.zeros(n, dtype=np.int64)
        closes = np.zeros(n, dtype=np.int64)
        tail = width - span
        full: np.ndarray = np.zeros(n, dtype=bool)
        if tail >= 0 and int((cal[-1] - cal[tail]).astype(np.int64)) == span - 1:
            full = np.asarray(common[:, tail:].all(axis=1))
            keep[full, tail:] = True
            closes[full] = span
        other = np.flatnonzero(~full)
        if other.size:
            c = common[other]
            start_day = last_day[other] - self.bar.duration(span - 1)
            before = c & (cal[None, :] <= start_day[:, None])
            has_before = before.any(axis=1)
            from_i = np.where(
                has_before, width - 1 - np.argmax(before[:, ::-1], axis=1), first_i[other]
            )
            kept = c & (np.arange(width)[None, :] >= from_i[:, None])
            keep[other] = kept
            closes[other] = kept.sum(axis=1)
            lo = int(from_i.min())
            key = np.concatenate(
                [
                    last_day[other].astype(np.int64).view(np.uint8).reshape(other.size, 8),
                    np.packbits(kept[:, lo:], axis=1),
                ],
                axis=1,
            )
            _, inverse = np.unique(key, axis=0, return_inverse=True)
            group[other] = inverse.reshape(-1) + 1  # group 0: the full rows
        return Spans(history, last_day, keep, group, closes)


def _leg_rows(values: np.ndarray, rows: np.ndarray, cut: slice) -> np.ndarray:
    """``values[rows, cut]``: a copy, or, when every pair names the same asset, its one row
    broadcast (read-only, nothing copied)."""
    if rows.size > 1 and bool((rows == rows[0]).all()):
        row = values[rows[0], cut]
        return np.broadcast_to(row, (rows.size, row.shape[0]))
    gathered: np.ndarray = values[:, cut][rows]
    return gathered


@dataclass(frozen=True, eq=False)
class Spans:
    """What :meth:`CandleMatrix.spans` finds per pair."""

    history_days: np.ndarray  # (pairs,) int: calendar days from first to last common close
    last_day: np.ndarray  # (pairs,) datetime64 (the bar's unit): the last common close
    keep: np.ndarray  # (pairs, days) bool: the closes the pair's panel holds
    group: np.ndarray  # (pairs,) int: pairs of one group sit on one calendar
    closes: np.ndarray  # (pairs,) int: how many closes the pair's panel holds
