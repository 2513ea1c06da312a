"""The screen: every pair of the universe through metrics, filter, score and both backtests,
published in one transaction so that a crash mid-screen leaves the previous screen served."""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import numpy as np

from pairscreen import clock
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import JobRun, Screen
from pairscreen.engine.executors import run_local
from pairscreen.engine.filtering import choose_filter, filter_code, filter_codes
from pairscreen.engine.panels import AlignedPair, align, group_by_history
from pairscreen.engine.required_fields import POSITION, ZONE, RequiredField
from pairscreen.engine.screen_chunks import ChunkJob
from pairscreen.market.cutoff import candles_until
from pairscreen.market.freshness import STALE, asset_freshness, day_start, last_days, stale_reason
from pairscreen.pegs.status import active_depegs, depegged_legs
from pairscreen.progress import Progress, no_progress
from pairscreen.runtime import Runtime
from pairscreen.screening.published import PublishedScreen
from pairscreen.types import Asset, BacktestBatch
from pairscreen.universe import pair_sector

log = logging.getLogger(__name__)

SCREEN_BT_DAYS = 360
EXECUTORS = ("local", "dask")
# The code of the pairs the engine cannot evaluate at all (fewer common days than the
# settings' ``min_history_days``, or no candles); counted before the filter's own codes.
TOO_SHORT = "insufficient_history"


@dataclass(frozen=True)
class ScreenSummary:
    screen_id: int
    generated_at: datetime
    n_pairs_screened: int
    n_survivors: int
    rejected: dict[str, int]


def run_screen(
    rt: Runtime,
    *,
    at: datetime | None = None,
    processes: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    on_progress: Progress = no_progress,
) -> ScreenSummary:
    """Compute the whole screen and publish it atomically; ``on_progress`` hears of each
    chunk of pairs computed."""
    generated_at = at or clock.now()
    payload = compute_screen(
        rt,
        generated_at,
        processes=processes,
        executor=executor,
        scheduler=scheduler,
        on_progress=on_progress,
    )
    with write_transaction():
        row = Screen.create(
            generated_at=generated_at,
            n_pairs_screened=payload["n_pairs_screened"],
            n_survivors=payload["n_survivors"],
            data_source=payload["data_source"],
            payload=json.dumps(payload, allow_nan=False, separators=(",", ":")),
        )
        regular = Screen.as_of.is_null()  # point-in-time screens are history: never pruned
        keep = (
            Screen.select(Screen.id)
            .where(regular)
            .order_by(Screen.id.desc())
            .limit(rt.settings.screens_kept)
        )
        Screen.delete().where(Screen.id.not_in(keep) & regular).execute()
        JobRun.replace(name="screen", finished_at=clock.now()).execute()
    rt.published.forget()  # this runtime serves the new screen at once
    return ScreenSummary(
        row.id,
        generated_at,
        payload["n_pairs_screened"],
        payload["n_survivors"],
        payload["rejected"],
    )


def data_source_label(rt: Runtime) -> str:
    label = rt.universe.label or "market data"
    return f"{label} (source: {rt.universe.market_source})"


def compute_screen(
    rt: Runtime,
    generated_at: datetime,
    *,
    processes: int | None = None,
    chunk_rows: int = 250,
    executor: str = "local",
    scheduler: str | None = None,
    on_progress: Progress = no_progress,
    as_of: date | None = None,
) -> dict[str, Any]:
    """The screen payload (the ``/screen/latest`` body) without publishing it.

    ``executor`` is ``local`` (``processes`` forked workers) or ``dask`` (the cluster at
    ``scheduler``); both give the same payload. ``as_of`` screens only the candles dated that
    day or earlier, with the depeg events active at ``generated_at`` (a point-in-time screen).
    """
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    settings = rt.settings
    choice = choose_filter(rt.plugins, rt.universe)
    candles = rt.candles.get()
    if as_of is not None:
        candles = candles_until(candles, as_of)
    pairs = rt.universe.screened_pairs()
    aligned: list[AlignedPair] = []
    assets: list[tuple[Asset, Asset]] = []
    rejected: Counter[str] = Counter()
    fresh = asset_freshness(rt.universe, last_days(candles), generated_at)
    data_days: list[np.datetime64] = []
    for a, b in pairs:
        # A stale leg is decided first, before any filter: an old price is never evaluated,
        # whatever else the pair would fail.
        if stale_reason(fresh, a, b):
            rejected[STALE] += 1
            if a.ticker in candles and b.ticker in candles:
                data_days.append(min(candles[a.ticker].dates[-1], candles[b.ticker].dates[-1]))
            continue
        if a.ticker not in candles or b.ticker not in candles:
            rejected[TOO_SHORT] += 1
            continue
        pair = align(candles[a.ticker], candles[b.ticker])
        if pair.n_days < settings.min_history_days:
            rejected[TOO_SHORT] += 1
            continue
        aligned.append(pair)
        assets.append((a, b))
        data_days.append(pair.dates[-1])
    depegs = active_depegs(generated_at if as_of is not None else None)
    jobs: list[ChunkJob] = []
    job_rows: list[list[int]] = []
    max_days = settings.window_days + SCREEN_BT_DAYS
    for rows, panel in group_by_history(aligned, max_days, settings.window_days):
        for start in range(0, len(rows), chunk_rows):
            chunk = rows[start : start + chunk_rows]
            sub = panel.rows(np.arange(start, start + len(chunk)))
            legs = tuple(depegged_legs(depegs, a, b) for a, b in zip(sub.a, sub.b, strict=True))
            jobs.append(
                ChunkJob(
                    panel=sub,
                    history_days=np.array([aligned[i].n_days for i in chunk]),
                    depegged=np.array([bool(pair_legs) for pair_legs in legs]),
                    screen_filter=choice,
                    strategy=settings.strategy,
                    scorer=settings.scorer,
                    bt_days=SCREEN_BT_DAYS,
                    depegged_legs=legs,
                )
            )
            job_rows.append(chunk)
    if executor == "dask":
        from pairscreen.engine.dask_executor import run_dask

        on_progress(0, len(jobs))
        results = run_dask(jobs, scheduler or "", candles=candles, plugins=rt.plugins)
        on_progress(len(jobs), len(jobs))
    else:
        results = run_local(
            rt.plugins, jobs, processes or rt.settings.screen_processes, on_progress=on_progress
        )
    survivors: list[dict[str, Any]] = []
    for chunk, result in zip(job_rows, results, strict=True):
        rejected.update(filter_code(r) for r in result.reasons if r)
        for j, i in enumerate(result.survivors):
            a_asset, b_asset = assets[chunk[i]]
            survivors.append(
                {
                    "sector": pair_sector(a_asset, b_asset),
                    "pair": [a_asset.ticker, b_asset.ticker],
                    "data_time": clock.iso(day_start(aligned[chunk[i]].dates[-1])),
                    "score": float(result.scores[j]),
                    "metrics": result.metrics.row(int(i)),
                    "backtest": {
                        "history_days": int(result.legs["A"].history_days[j]),
                        "A": screen_leg(result.legs["A"], j, a_asset.ticker),
                        "B": screen_leg(result.legs["B"], j, b_asset.ticker),
                    },
                }
            )
    survivors.sort(key=lambda s: (-s["score"], s["pair"]))
    codes = dict.fromkeys((STALE, TOO_SHORT, *filter_codes(rt.plugins.filters.get(choice.name))))
    return {
        "generated_at": clock.iso(generated_at),
        "n_pairs_screened": len(pairs),
        "n_survivors": len(survivors),
        "survivors": survivors,
        "data_source": data_source_label(rt),
        "rejected": {code: rejected.get(code, 0) for code in codes},
        "data_time": data_time_range(data_days),
        "filter": choice.as_json(),
        "backtest_days": SCREEN_BT_DAYS,
    }


def data_time_range(days: list[np.datetime64]) -> dict[str, str] | None:
    """The newest and oldest last common day of the screened pairs with data (00:00 UTC)."""
    if not days:
        return None
    return {"newest": clock.iso(day_start(max(days))), "oldest": clock.iso(day_start(min(days)))}


def screen_leg(batch: BacktestBatch, j: int, base: str) -> dict[str, Any]:
    """Survivor ``j``'s leg, shaped like a snapshot's leg so the two compare field by field."""
    buy_hold = float(batch.buy_hold_growth_pct[j])
    return {
        "base_leg": base,
        "growth_pct": float(batch.growth_pct[j]),
        "n_trades": int(batch.n_trades[j]),
        "max_drawdown_pct": float(batch.max_drawdown_pct[j]),
        "buy_hold": None if np.isnan(buy_hold) else {"growth_pct": buy_hold},
    }


def latest_screen_json(rt: Runtime) -> str:
    """The latest published screen as stored (JSON text); NotFound before the first one."""
    return rt.published.latest().payload


def latest_pairs_json(rt: Runtime) -> str:
    """The ``/pairs`` body of the latest screen as JSON text; NotFound before the first one."""
    return pairs_json(rt.published.latest())


def pairs_json(screen: PublishedScreen) -> str:
    """The ``/pairs`` body of ``screen``, serialised once per screen."""
    return screen.view("pairs", _render_pairs)


def _render_pairs(payload: str) -> str:
    return json.dumps(compact_pairs(json.loads(payload)), allow_nan=False)


def compact_pairs(screen: dict[str, Any]) -> dict[str, Any]:
    """The ``/pairs`` body: survivors with key fields only, best score first."""
    pairs = [
        {
            "pair": f"{s['pair'][0]}/{s['pair'][1]}",
            "a": s["pair"][0],
            "b": s["pair"][1],
            "sector": s["sector"],
            **present(s["metrics"], ZONE, POSITION),
            "score": s["score"],
        }
        for s in screen["survivors"]
    ]
    pairs.sort(key=lambda p: -p["score"])
    return {"generated_at": screen["generated_at"], "count": len(pairs), "pairs": pairs}


def present(metrics: dict[str, Any], *wanted: RequiredField) -> dict[str, Any]:
    """The ``wanted`` fields of a survivor's metrics; one whose metric failed is left out."""
    return {f.name: metrics[f.name] for f in wanted if f.name in metrics}
