"""The screen, the live snapshot and the chart: the engine applied to the universe."""
