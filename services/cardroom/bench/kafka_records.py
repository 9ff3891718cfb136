"""``cardroom bench kafka_records``: building the Kafka record batches the dealer produces.

The issue-16 profile found a third of the dealer's CPU in kafka-python's sender, much of it its
pure-Python CRC-32C (used when the ``crc32c`` C package is missing). This benchmark builds record
batches of real table-event sizes with kafka-python's own batch builder twice in the same run: with
the CRC it uses as installed and with its pure-Python CRC (the reference), and prints both with the
ratio. No broker is needed; no assertions (not a test).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

EVENT_BYTES = 180  # a typical encoded TableEvent (action or turn), measured from the dealer's events
EVENTS_PER_BATCH = 8


def _batches_per_second(crc: Callable[[memoryview], int], seconds: float) -> float:
    from kafka.record import default_records

    payload = b"\x0a" * EVENT_BYTES
    original = default_records.calc_crc32c
    default_records.calc_crc32c = crc  # the builder looks the name up at build time
    try:
        built, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            builder = default_records.DefaultRecordBatchBuilder(
                magic=2,
                compression_type=0,
                is_transactional=False,
                producer_id=-1,
                producer_epoch=-1,
                base_sequence=-1,
                batch_size=1 << 20,
            )
            for offset in range(EVENTS_PER_BATCH):
                builder.append(offset, timestamp=None, key=b"table-1", value=payload, headers=[])
            builder.build()
            built += 1
        return built / (time.perf_counter() - start)
    finally:
        default_records.calc_crc32c = original


def run(args: argparse.Namespace) -> None:
    from kafka.record import _crc32c, util

    seconds = 0.5 if getattr(args, "quick", False) else 3.0
    accelerated = util.crc32c_c is not None
    installed = _batches_per_second(util.calc_crc32c, seconds)
    reference = _batches_per_second(_crc32c.crc, seconds)
    label = "C crc32c" if accelerated else "pure-Python (crc32c package missing!)"
    print(
        f"record batches of {EVENTS_PER_BATCH} x {EVENT_BYTES} B: installed CRC ({label}) {installed:,.0f}/s, "
        f"kafka-python pure-Python CRC {reference:,.0f}/s, ratio {installed / reference:.1f}x"
    )
