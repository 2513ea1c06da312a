"""The walk-forward study of the screen's rules on real daily closes (docs/methodology.md,
"The rules on real history").

Give it a folder of ``TICKER.csv`` files (``date,close,volume``, one row per UTC day, volume in
base-asset units as Binance publishes it). It builds a ``csv`` universe of the crypto files in
a temporary folder (volume converted to the quote currency, one sector, every pair), syncs
it into a fresh SQLite database and runs ``pairscreen evaluate`` twice through the CLI:

1. **selection** (as-of days ``--select-from`` … ``--select-to``): every rule set, and the
   choice, made by a rule fixed in advance: among the rule sets whose 30-day difference is
   not "too few observations", the one with the highest lower bound of that difference's
   95 % interval (the default rules when none qualifies);
2. **report** (as-of days ``--report-from`` … ``--report-to``, after the selection period's
   last outcome): every rule set again, the chosen one read from here only.

It prints the two tables as Markdown, with the dates each used, and writes each run's JSON to
``--out``. Nothing is tuned by hand: the candidate rule sets are listed below.

    .venv/bin/python benchmarks/evaluation_study.py --data DIR [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CRYPTO = [
    "BTC", "ETH", "BNB", "XRP", "ADA", "DOGE", "LTC", "LINK", "BCH", "ETC",
    "ATOM", "DOT", "FIL", "AVAX", "NEAR", "AAVE", "SOL", "TRX", "XLM", "UNI",
]  # fmt: skip
EVERY = 15
HORIZONS = "30,90"
# Optional rules and single-threshold variants of the default filter, each a rule file.
CANDIDATES = {
    "half_life_60": {"max_half_life_days": 60},
    "coint_0.05": {"coint_below": 0.05},
    "correlation_0.5": {"min_return_correlation": 0.5},
    "hurst_0.45": {"hurst_below": 0.45},
    "adf_0.10": {"adf_below": 0.10},
    # The screen-wide rules, replayed point-in-time: q-values at the usual 5 % false-discovery
    # rate, and persistence (of the 6 previous daily screens, half or all survived).
    "coint_q_0.05": {"coint_q_below": 0.05},
    "adf_q_0.05": {"adf_q_below": 0.05},
    "persistence_3": {"min_persistence": 3},
    "persistence_6": {"min_persistence": 6},
}


def build_universe(data: Path, folder: Path) -> Path:
    """A csv universe of the crypto files found in ``data`` (volume x close: quote units)."""
    prices = folder / "prices"
    prices.mkdir()
    lines = ['label = "real daily closes (Binance spot, to 2023-12-31)"', "", "[components]"]
    lines += [
        'market_source = "csv"',
        "",
        "[plugins.csv_source]",
        'path = "prices"',
        'volume_unit = "quote"',
        "",
    ]
    for ticker in CRYPTO:
        source = data / f"{ticker}.csv"
        if not source.exists():
            continue
        rows = source.read_text().splitlines()
        header = rows[0].split(",")
        at = {name: i for i, name in enumerate(header)}
        out = ["date,close,volume"]
        for row in rows[1:]:
            cells = row.split(",")
            close = float(cells[at["close"]])
            volume = float(cells[at["volume"]]) * close if cells[at["volume"]] else ""
            out.append(f"{cells[at['date']]},{close!r},{volume}")
        (prices / f"{ticker}.csv").write_text("\n".join(out) + "\n")
        lines += ["[[asset]]", f'ticker = "{ticker}"', 'sector = "crypto"', ""]
    universe = folder / "universe.toml"
    universe.write_text("\n".join(lines))
    return universe


def pairscreen(folder: Path, universe: Path, *args: str) -> str:
    env = dict(os.environ, PAIRSCREEN_LOAD_PLUGINS="")
    command = [
        str(ROOT / ".venv/bin/pairscreen"),
        "--data-dir", str(folder), "--universe", str(universe),
        "--database-url", f"sqlite:///{folder / 'study.sqlite3'}", "--quiet", *args,
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"pairscreen {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def pp(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.1f}"


def markdown(body: dict, title: str) -> str:  # type: ignore[type-arg]
    lines = [
        f"**{title}**: as-of days {body['from']} → {body['to']} every {body['every_days']} "
        f"days, {body['pairs_screened']} pairs, {body['comparisons']} comparisons (the screen's "
        "horizons in a fixed sequence, the other rows Holm).",
        "",
        "| rule set | h | survivors n (pairs, periods, top pair) | difference, pp [95 %] "
        "| p | p adjusted | reading | hold cheap leg: surv / rest | hold other leg: surv / rest |",
        "|---|---:|---|---|---:|---:|---|---|---|",
    ]
    for rule_set in body["rule_sets"]:
        if rule_set["never_binds"]:
            lines.append(f"| {rule_set['name']} | | never binds | | | | | | |")
            continue
        for h in rule_set["horizons"]:
            rev, cheap, other = h["reversion"], h["hold_value"], h["hold_other_leg"]
            s, d = rev["survivors"], rev["difference"]
            ci = d["ci95"] or [None, None]
            share = "-" if s["top_pair_share"] is None else f"{s['top_pair_share']:.0%}"
            p = "-" if d["p_value"] is None else f"{d['p_value']:.3f}"
            holm = "-" if d["p_holm"] is None else f"{d['p_holm']:.3f}"
            lines.append(
                f"| {rule_set['name']} | {h['horizon_days']} | {s['n']} ({s['distinct_pairs']}, "
                f"{s['independent_days']}, {share}) | {pp(d['estimate'])} "
                f"[{pp(ci[0])}, {pp(ci[1])}] | {p} | {holm} | {d['reading'].replace('_', ' ')} "
                f"| {pp(cheap['survivors']['mean'])} / {pp(cheap['rest']['mean'])} "
                f"| {pp(other['survivors']['mean'])} / {pp(other['rest']['mean'])} |"
            )
    return "\n".join(lines)


def choose(body: dict) -> str:  # type: ignore[type-arg]
    """The rule fixed in advance: the highest lower bound of the 30-day difference among
    the sets with enough observations; the screen's rules when none has."""
    best, best_low = "screen", None
    for rule_set in body["rule_sets"]:
        for h in rule_set["horizons"]:
            d = h["reversion"]["difference"]
            if h["horizon_days"] != 30 or d["reading"] == "too_few_observations":
                continue
            low = d["ci95"][0] if d["ci95"] else None
            if low is not None and (best_low is None or low > best_low):
                best, best_low = rule_set["name"], low
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="folder of TICKER.csv files")
    parser.add_argument("--out", type=Path, help="write selection.json and report.json here")
    parser.add_argument("--select-from", default="2019-07-01")
    parser.add_argument("--select-to", default="2021-04-01")
    parser.add_argument("--report-from", default="2021-07-01")
    parser.add_argument("--report-to", default="2023-10-02")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pairscreen-study-") as tmp:
        folder = Path(tmp)
        universe = build_universe(args.data.resolve(), folder)
        rules = []
        for name, thresholds in CANDIDATES.items():
            path = folder / f"{name}.toml"
            body = "\n".join(f"{k} = {v}" for k, v in thresholds.items())
            path.write_text(f'[screen]\nfilter = "default"\n{body}\n')
            rules += ["--rules", str(path)]
        pairscreen(folder, universe, "db", "upgrade")
        pairscreen(folder, universe, "data", "sync")
        runs = {}
        for name, start, end in (
            ("selection", args.select_from, args.select_to),
            ("report", args.report_from, args.report_to),
        ):
            out = pairscreen(
                folder, universe, "evaluate", "--from", start, "--to", end,
                "--every", str(EVERY), "--horizon", HORIZONS, "--json", *rules,
            )  # fmt: skip
            runs[name] = json.loads(out)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, body in runs.items():
            (args.out / f"{name}.json").write_text(json.dumps(body, indent=1))
    chosen = choose(runs["selection"])
    print(markdown(runs["selection"], "Selection period"))
    print()
    print(f"Chosen on the selection period (highest 30-day lower bound): **{chosen}**")
    print()
    print(markdown(runs["report"], "Report period"))
    for name, body in runs.items():
        print()
        print(f"{name} warnings:")
        for w in body["warnings"]:
            print(f"- {w}")


if __name__ == "__main__":
    main()
