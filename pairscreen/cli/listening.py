"""The listening socket, bound before anything else happens.

``serve`` and ``demo`` bind their port first: a port already taken then stops the command
before it creates or deletes anything (a second ``demo`` would otherwise replace the running
demo's database and print keys the running server refuses), and the banner is printed only
once the port is ours. uvicorn is handed the bound socket, so no other process can take the
port between the check and the serving.
"""

from __future__ import annotations

import errno
import socket

from pairscreen.cli import exits
from pairscreen.cli.common import CommandError
from pairscreen.cli.http_guard import ConnectionLimits, guarded_protocol
from pairscreen.config import Settings, load_settings


def bind_port(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``, or a one-sentence :class:`CommandError`."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise CommandError(
                f"port {port} on {host} is already in use (is another pairscreen demo or "
                "server running?): stop that process or choose another port with --port",
                exits.BUSY,
            ) from None
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def run_server(
    listener: socket.socket,
    workers: int = 1,
    *,
    log_format: str = "text",
    settings: Settings | None = None,
) -> None:
    """Serve the app on the bound ``listener``, in this process or in ``workers`` processes.

    In JSON, uvicorn installs no handlers of its own, so its lines reach the root's JSON handler.
    Each connection is held to the settings' limits (:mod:`pairscreen.cli.http_guard`).
    """
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    settings = settings or load_settings()
    limits = ConnectionLimits.of(settings)

    host, port = listener.getsockname()[:2]
    config = uvicorn.Config(
        "pairscreen.app:asgi_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
        access_log=False,  # the app logs each request itself (pairscreen.access)
        http=guarded_protocol(limits),
        timeout_keep_alive=max(1, round(settings.keep_alive_seconds)),
        log_config=LOGGING_CONFIG if log_format == "text" else None,
    )
    try:
        if workers > 1:
            from uvicorn.supervisors import Multiprocess

            Multiprocess(config, sockets=[listener]).run()
        else:
            uvicorn.Server(config).run(sockets=[listener])
    except KeyboardInterrupt:  # Ctrl-C is the way to stop, not an error
        pass
