"""Settings, read once from the command line and the environment (DESIGN §7)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs


@dataclass(frozen=True)
class Settings:
    """Where data lives and how the service behaves; every field has an environment variable."""

    data_dir: Path
    database_url: str
    universe_path: Path | None = None  # None: the built-in demo universe
    window_days: int = 540
    min_history_days: int = 200
    strategy: str = "accumulation"
    scorer: str = "score"
    chart_renderer: str = "default"
    screens_kept: int = 20
    in_flight_limits: dict[str, int] = field(default_factory=lambda: {"personal": 2, "pro": 4})
    daily_limits: dict[str, int] = field(default_factory=lambda: {"personal": 200, "pro": 2000})
    lock_ttl_seconds: float = 60.0
    # Threads per worker process for compute requests (a pool of their own); 0: one fewer
    # than the usable cores, at least 1, so the event loop and cheap reads keep a core.
    compute_threads: int = 0

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("pairscreen", appauthor=False))


def load_settings(
    *,
    data_dir: str | Path | None = None,
    database_url: str | None = None,
    universe: str | Path | None = None,
) -> Settings:
    """Settings from explicit values, else the environment, else the defaults."""
    env = os.environ
    folder = Path(data_dir or env.get("PAIRSCREEN_DATA_DIR") or default_data_dir()).expanduser()
    url = database_url or env.get("DATABASE_URL") or f"sqlite:///{folder / 'pairscreen.sqlite3'}"
    universe_value = universe or env.get("PAIRSCREEN_UNIVERSE")
    in_flight = {
        "personal": int(env.get("PAIRSCREEN_IN_FLIGHT_PERSONAL", "2")),
        "pro": int(env.get("PAIRSCREEN_IN_FLIGHT_PRO", "4")),
    }
    daily = {
        "personal": int(env.get("PAIRSCREEN_DAILY_LIMIT_PERSONAL", "200")),
        "pro": int(env.get("PAIRSCREEN_DAILY_LIMIT_PRO", "2000")),
    }
    return Settings(
        data_dir=folder,
        database_url=url,
        universe_path=Path(universe_value).expanduser() if universe_value else None,
        window_days=int(env.get("PAIRSCREEN_WINDOW_DAYS", "540")),
        in_flight_limits=in_flight,
        daily_limits=daily,
        compute_threads=int(env.get("PAIRSCREEN_COMPUTE_THREADS", "0")),
        lock_ttl_seconds=float(env.get("PAIRSCREEN_LOCK_TTL", "60")),
        chart_renderer=env.get("PAIRSCREEN_CHART_RENDERER", "default"),
    )
