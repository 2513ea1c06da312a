"""Built-in pairscan plugins; they use only the public hooks, as a third-party plugin does."""
