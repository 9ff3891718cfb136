"""The harness's temp dirs (a service process's data and log, the test PKI, Envoy's work dir) are made under
pytest's base temp, which pytest rotates, not loose in the system's temp dir: every run of the suite left about
300 ``cardroom-svc-*`` dirs in /tmp before."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests import tempdirs
from tests.services.procs import ServiceProcess, harness_pki
from tests.web.proxy import EnvoyProcess


def test_a_service_process_s_data_dir_is_under_pytest_s_base_temp(tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.getbasetemp()
    service = ServiceProcess("wallet")
    assert service.data_dir.is_dir() and service.data_dir.is_relative_to(base)
    assert harness_pki().is_relative_to(base)
    assert EnvoyProcess("127.0.0.1:1").workdir.is_relative_to(base)


def test_outside_a_session_the_system_temp_dir_is_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tempdirs, "_BASE", [])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = tempdirs.make("cardroom-svc-")
    assert made.parent == tmp_path and made.name.startswith("cardroom-svc-")
