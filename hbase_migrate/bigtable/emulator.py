"""The Bigtable emulator on 127.0.0.1: Google's ``cbtemulator`` (Debian package
``google-cloud-cli-bigtable-emulator``), data in memory only, as a background process
whose address and process group are kept in ``<folder>/emulator.json``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from hbase_migrate.bigtable.errors import BigtableEmulatorError
from hbase_migrate.services import HOST, free_port, group_alive, log_tail, spawn, stop_groups

PACKAGE = "google-cloud-cli-bigtable-emulator"
DEBIAN_PATH = Path("/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator")
STATE = "emulator.json"


def emulator_binary() -> Path | None:
    """Where ``cbtemulator`` is (``$CBTEMULATOR``, the PATH, then Debian's package path)."""
    for found in (os.environ.get("CBTEMULATOR"), shutil.which("cbtemulator"), DEBIAN_PATH):
        if found and Path(found).is_file():
            return Path(found)
    return None


@dataclass(frozen=True)
class Emulator:
    """A running emulator: ``host`` is ``127.0.0.1:port`` (what ``emulator_host`` and
    ``BIGTABLE_EMULATOR_HOST`` take), ``pid`` its process group."""

    host: str
    pid: int
    folder: Path

    def to_json(self) -> dict[str, object]:
        return {"emulator_host": self.host, "pid": self.pid, "dir": str(self.folder)}


def _answers(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False


def start_emulator(folder: Path, port: int | None = None, timeout: float = 30.0) -> Emulator:
    """Start ``cbtemulator`` on ``127.0.0.1:port`` (a free one by default), its log and
    ``emulator.json`` in ``folder``; returns once it accepts connections."""
    exe = emulator_binary()
    if exe is None:
        raise BigtableEmulatorError(
            f"cbtemulator not found (not on PATH, not at {DEBIAN_PATH}): install Debian's "
            f"{PACKAGE} package from Google's apt repository (scripts/system-deps.sh "
            "bigtable), or set CBTEMULATOR to the binary")
    folder.mkdir(parents=True, exist_ok=True)
    running = read_state(folder)
    if running is not None:
        raise BigtableEmulatorError(f"{folder / STATE}: an emulator already runs at "
                                    f"{running.host} (pid {running.pid}): stop it first")
    port = port or free_port()
    log = folder / "emulator.log"
    proc = spawn([str(exe), "-host", HOST, "-port", str(port)], log, cwd=folder)
    deadline = time.monotonic() + timeout
    while not _answers(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_groups([proc], 5.0)
            raise BigtableEmulatorError(f"cbtemulator did not answer on {HOST}:{port}:\n"
                                        f"{log_tail(log)}")
        time.sleep(0.05)
    emulator = Emulator(f"{HOST}:{port}", proc.pid, folder)
    (folder / STATE).write_text(json.dumps(emulator.to_json()) + "\n", encoding="utf-8")
    return emulator


def read_state(folder: Path) -> Emulator | None:
    """The emulator ``folder``'s ``emulator.json`` names, if it still runs."""
    try:
        data = json.loads((folder / STATE).read_text(encoding="utf-8"))
        emulator = Emulator(str(data["emulator_host"]), int(data["pid"]), folder)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return emulator if group_alive(emulator.pid) else None


def stop_emulator(folder: Path, timeout: float = 10.0) -> Emulator | None:
    """Stop the emulator started in ``folder`` (None when none runs there)."""
    emulator = read_state(folder)
    if emulator is not None:
        stop_groups([emulator.pid], timeout)
    (folder / STATE).unlink(missing_ok=True)
    return emulator

