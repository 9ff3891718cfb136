"""A bidi stream's status that grpc.aio loses when a request is written as the stream ends.

grpc.aio replaces a call's status with its own INTERNAL "Internal error from Core" when a request
write fails because core had already closed the stream (the server ended the call, or the connection
died): grpc/grpc#36066, open in grpcio 1.85. The caller then cannot tell a server's UNAVAILABLE (a
dealer giving its table up, a gateway going away) from a real internal error. :func:`unmasked` reads
such a status as the stream breaking (UNAVAILABLE, which every caller of a long-lived stream already
follows or reconnects on); a server's own INTERNAL carries the server's text and stays as it came.
"""

from __future__ import annotations

import grpc

#: The details grpc.aio gives the status it puts in place of the call's.
CORE_DETAILS = "Internal error from Core"


def lost_in_a_write(err: grpc.aio.AioRpcError) -> bool:
    """Whether ``err`` is grpc.aio's local INTERNAL for a request written after core closed the stream."""
    debug = err.debug_error_string() or ""
    return (
        err.code() == grpc.StatusCode.INTERNAL
        and err.details() == CORE_DETAILS
        and debug.startswith('Failed "execute_batch"')
        and "SendMessageOperation" in debug
    )


def unmasked(err: grpc.aio.AioRpcError, stream: str) -> grpc.aio.AioRpcError:
    """``err``, or UNAVAILABLE in its place when its status was lost in a write (module docstring);
    ``stream`` names the stream in the details ("the Play stream")."""
    if not lost_in_a_write(err):
        return err
    return grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE,
        err.initial_metadata(),
        err.trailing_metadata(),
        details=f"{stream} ended while a request was being sent (its status was lost)",
        debug_error_string=err.debug_error_string(),
    )
