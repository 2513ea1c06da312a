"""The plugin machinery, in one place: what a plugin may implement, which plugins load, and
how the framework calls them.

* ``hookspecs.py``: the hook specifications (the exact contract of every hook) and
  ``hookimpl``, which plugins import as ``from pairscreen import hookimpl``;
* ``loader.py``: which plugins load and from where (the built-ins of ``pairscreen_plugins``,
  the ``pairscreen`` entry points, ``PAIRSCREEN_PLUGINS_DIR``, less
  ``PAIRSCREEN_DISABLE_PLUGINS``), and each one's origin;
* ``registry.py``: ``Plugins``, the typed facade over the loaded plugins and the only code
  that calls a hook: the components they register, by kind, in ``Registry``s, and their
  ``[plugins.<name>]`` options.

The built-in plugins themselves are the separate ``pairscreen_plugins`` package (the
``plugins/`` folder); ``pairscreen plugins`` (``cli/plugins.py``) lists what is loaded.
"""
