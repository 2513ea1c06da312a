"""The computation engine: candles in memory, panels, metrics, filter, backtests."""
