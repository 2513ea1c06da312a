"""Storing a screen: its payload, survivors, page blocks and verdicts, and the caches that
read them back; below the runtime, which holds those caches."""
