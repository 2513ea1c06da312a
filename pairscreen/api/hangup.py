"""Noticing that a client has gone while its request is still being computed.

A compute request is charged only if its answer can reach the client. The ASGI server says a
client went away by answering ``http.disconnect`` from ``receive``; nothing asks for it while
a handler waits on a computation, so :class:`Hangup` stands between the server and the app:
the app reads the request through it as before, and :meth:`Hangup.wait` reads on while the
computation runs and returns once the client has gone. What it reads meanwhile (the rest of
a body) is kept for the app.
"""

from __future__ import annotations

from collections import deque

from starlette.types import Message, Receive

SCOPE_KEY = "pairscreen.hangup"
DISCONNECT: Message = {"type": "http.disconnect"}


class Hangup:
    """The request's ``receive``, watched for the client's departure."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self._kept: deque[Message] = deque()
        self.gone = False

    async def receive(self) -> Message:
        """The app's ``receive``: what :meth:`wait` kept first, then the server's messages."""
        if self._kept:
            return self._kept.popleft()
        if self.gone:
            return DISCONNECT
        return self._note(await self._receive())

    async def wait(self) -> None:
        """Return once the client has disconnected (cancel it when no longer interested)."""
        while not self.gone:
            message = self._note(await self._receive())
            if not self.gone:
                self._kept.append(message)

    def _note(self, message: Message) -> Message:
        if message["type"] == "http.disconnect":
            self.gone = True
        return message
