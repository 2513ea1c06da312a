"""The website: a static client of the JSON API, served by the same app at ``/``."""
