"""Built-in pairscreen plugins; they use only the public hooks, as a third-party plugin does."""
