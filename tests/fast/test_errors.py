"""The runtime's error model: one table from the core's reasons to status codes, rich details
(ErrorInfo with the reason, BadRequest field violations) through grpcio-status, clipped input,
and clients reading the reason back — checked on an in-process evaluator server."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from google.rpc import error_details_pb2

from cardroom.core.engine.errors import IllegalAction, Reason
from cardroom.core.ids import InvalidId
from cardroom.runtime import errors
from cardroom.v1 import evaluator_pb2 as ev, evaluator_pb2_grpc as ev_grpc
from tests.fast.inproc import serving


def test_every_core_reason_has_one_status() -> None:
    assert set(errors.REASON_STATUS) == set(Reason)
    err = errors.from_illegal(IllegalAction(Reason.OUT_OF_TURN, "seat 2 is to act"))
    assert (err.code, err.reason, err.message) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "OUT_OF_TURN",
        "seat 2 is to act",
    )
    assert errors.from_illegal(IllegalAction(Reason.BAD_SETUP, "no seats")).code == grpc.StatusCode.INVALID_ARGUMENT


def test_status_carries_error_info_and_field_violations() -> None:
    err = errors.invalid("amount: must be positive, got -5")
    status = err.to_status_proto()
    assert status.code == grpc.StatusCode.INVALID_ARGUMENT.value[0] and status.message == err.message
    info, bad = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
    assert status.details[0].Unpack(info) and status.details[1].Unpack(bad)
    assert (info.domain, info.reason) == ("cardroom", "INVALID_ARGUMENT")
    assert [(v.field, v.description) for v in bad.field_violations] == [("amount", "must be positive, got -5")]
    assert errors.precondition("not your turn").violations == ()  # no field named: no violation
    assert errors.precondition("x: y").violations == ()  # BadRequest only for INVALID_ARGUMENT
    from_id = errors.from_invalid_id(InvalidId("player_id", "'_a' is not a player id"))
    assert from_id.reason == errors.INVALID_ID and from_id.violations[0].field == "player_id"


def _utf8(text: str) -> int:
    return len(text.encode())


@pytest.mark.parametrize("char", ["x", "\u00e9", "\U0001f600"])
def test_echoed_input_is_clipped_in_bytes(char: str) -> None:
    """Limits count UTF-8 bytes: 1,000 four-byte characters were within the old 1,000-character
    limit and still blew the client's metadata limit once percent-encoded in grpc-message."""
    huge = char * 20_000
    err = errors.invalid(f"hole[0]: {huge!r} is not a card")
    assert _utf8(err.message) <= errors.MAX_MESSAGE and "20025 characters" in err.message.rsplit("(cut, ", 1)[1]
    assert err.message.startswith("hole[0]: '" + char)
    assert all(_utf8(v.description) <= errors.MAX_FIELD for v in err.violations)
    assert len(err.to_status_proto().SerializeToString()) <= errors.MAX_STATUS


def test_the_whole_status_fits_its_budget() -> None:
    """However many violations and metadata entries a rejection names, the serialized status stays
    within MAX_STATUS; the first ones are kept."""
    many = [errors.FieldViolation(f"players[{i}].cards" + "\U0001f600" * 100, "bad " * 100) for i in range(200)]
    err = errors.ServiceError(
        grpc.StatusCode.INVALID_ARGUMENT,
        "\U0001f600" * 5_000,
        reason="R" * 5_000,
        violations=many,
        metadata={f"k{i}" * 50: "v" * 5_000 for i in range(100)},
    )
    assert len(err.to_status_proto().SerializeToString()) <= errors.MAX_STATUS
    assert 0 < len(err.violations) < len(many) and err.violations[0].field.startswith("players[0].cards")
    assert _utf8(err.reason) <= errors.MAX_FIELD
    assert errors.clip("abc", 2) == "... (cut, 3 characters)"  # a limit under the note keeps only the note
    assert errors.clip("short", 100) == "short"


def test_words_for_people() -> None:
    assert errors.in_words("AMOUNT_BELOW_MINIMUM") == "amount below minimum"
    assert (
        errors.describe("FAILED_PRECONDITION", "OUT_OF_TURN", "seat 2 is to act")
        == "out of turn (FAILED_PRECONDITION): seat 2 is to act"
    )
    assert errors.describe("UNAVAILABLE", "", "down") == "UNAVAILABLE: down"


def test_a_20kb_bad_card_is_invalid_argument_with_the_field() -> None:
    from evaluator.service import EvaluatorService

    async def call() -> grpc.aio.AioRpcError:
        async with serving(ev_grpc.add_EvaluatorServicer_to_server, EvaluatorService(workers=1)) as address:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = ev_grpc.EvaluatorStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.Evaluate(
                        ev.EvaluateRequest(
                            ranking=ev.RANKING_HIGH, hole=["x" * 20_000, "Kd"], board=["2c", "3d", "4h"]
                        ),
                        timeout=10,
                    )
                return caught.value

    err = asyncio.run(call())
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
    assert err.details().startswith("hole[0]: ") and _utf8(err.details()) <= errors.MAX_MESSAGE
    assert errors.reason_of(err) == "BAD_REQUEST"
    assert [v.field for v in errors.violations_of(err)] == ["hole[0]"]
    assert errors.describe_error(err).startswith("bad request (INVALID_ARGUMENT): hole[0]: ")


def test_the_dealer_can_switch_to_the_runtime_model_by_import() -> None:
    """services/dealer/errors.py's helpers have twins here with the same codes and the same
    ``code`` / ``message`` attributes, so the dealer switches by importing them (lead's step)."""
    from dealer import errors as dealer_errors

    for name in ("invalid", "not_found", "precondition", "exists", "denied", "unavailable"):
        theirs, ours = getattr(dealer_errors, name)("field: text"), getattr(errors, name)("field: text")
        assert (ours.code, ours.message) == (theirs.code, theirs.message), name
    legacy = errors.ServiceError(grpc.StatusCode.NOT_FOUND, "no table 't'")  # DealerError(code, message)
    assert (legacy.code, legacy.message, legacy.reason) == (grpc.StatusCode.NOT_FOUND, "no table 't'", "NOT_FOUND")
