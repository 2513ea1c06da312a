"""Reading a stored screen: its pages, the compact /pairs view, the CSV, the status, and
what a moment of /screens?at= names."""
