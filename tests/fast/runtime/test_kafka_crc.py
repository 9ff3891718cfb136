"""kafka-python computes the record-batch CRC-32C with the C ``crc32c`` package pinned in
requirements.lock, not with its pure-Python fallback (issue 16: the fallback was a large share of the
dealer's CPU). The check is on what kafka-python will call, and that it computes the right CRC."""

from __future__ import annotations

from kafka.record import _crc32c, default_records, util


def test_kafka_python_uses_the_c_crc32c():
    assert util.crc32c_c is not None, "the crc32c package is missing: kafka-python falls back to pure Python"
    assert util.calc_crc32c.__defaults__ == (util.crc32c_c,)
    assert default_records.calc_crc32c is util.calc_crc32c


def test_the_c_crc_agrees_with_kafka_pythons_own():
    data = memoryview(bytes(range(256)) * 7)
    assert util.calc_crc32c(data) == _crc32c.crc(data)
    assert util.calc_crc32c(memoryview(b"123456789")) == 0xE3069283  # the CRC-32C check value
