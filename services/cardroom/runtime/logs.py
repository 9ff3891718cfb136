"""Structured logs: one JSON object per line on stderr."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """Format records as JSON with time, level, service, logger, message and any extras."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "service": self.service,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, separators=(",", ":"))


class KafkaCloseNoise(logging.Filter):
    """kafka-python logs ERROR "Metadata refresh: failed Cancelled" when a client is closed while a
    metadata request is in flight (the dealer's restore reader, done with the topic): a client shutting
    down, not a failure. Dropped, so an ERROR line means something went wrong."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Metadata refresh: failed Cancelled")


def setup_logging(service: str, level: str = "INFO") -> None:
    """Send every logger's records to stderr as JSON lines at ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(service))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("kafka").setLevel(max(logging.WARNING, logging.getLevelName(level)))
    cluster = logging.getLogger("kafka.cluster")
    if not any(isinstance(f, KafkaCloseNoise) for f in cluster.filters):
        cluster.addFilter(KafkaCloseNoise())
