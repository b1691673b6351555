"""Every exception class the core defines is an HBaseMigrateError, so the command line turns
each into one line and exit code 2 instead of a traceback."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import hbase_migrate
from hbase_migrate.cli import main
from hbase_migrate.errors import HBaseMigrateError


def test_every_error_class_of_the_core_is_an_hbase_migrate_error() -> None:
    found = {}
    for info in pkgutil.walk_packages(hbase_migrate.__path__, "hbase_migrate."):
        if info.name.endswith("__main__"):
            continue  # running it is the command line itself
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, Exception)
                    and obj.__module__ == module.__name__):
                found[f"{module.__name__}.{name}"] = obj
    outsiders = sorted(name for name, cls in found.items()
                       if not issubclass(cls, HBaseMigrateError))
    # private signals, never raised out of their modules: the reader's normal end of data,
    # a WebHDFS OPEN hung up on (asked again, then the file's own error), the compiled
    # renderer's hand-over of a message to the reference (when built), the copy
    # method's first reason for the scan copy (a choice, not an error), the Spark
    # jobs' word for a job not started after another failed (skipped, never raised), the
    # compiled region digest's hand-over of a region to the rows path (``hfile.region``
    # catches it and reads the region again), and a DataNode's refusal (the next replica is
    # asked, then the file's own error)
    assert "hbase_migrate.wal.reader._End" in outsiders
    assert set(outsiders) <= {"hbase_migrate.wal.reader._End", "hbase_migrate.wal.source._HungUp",
                              "hbase_migrate.sinks._render._Unusual",
                              "hbase_migrate.hfile._digestscan.Unfused",
                              "hbase_migrate.snapshot.choose._Scan",
                              "hbase_migrate.spark.jobs.NotStarted",
                              "hbase_migrate.hdfs.datanode._Refused"}, outsiders
    assert len(found) > 20


def test_a_protobuf_error_in_a_wal_header_is_one_line(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.wal"
    bad.write_bytes(b"PWAL\x03\xff\xff\xff")  # a 3-byte header that is no protobuf message
    with pytest.raises(SystemExit) as exit_info:
        main(["wal", "dump", str(bad)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert str(bad) in err and "Traceback" not in err


def test_an_unexpected_error_is_one_line_and_its_traceback_goes_to_a_file(
        tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Whatever escapes a command (here a bug planted in the WAL reader) is one line naming
    the error, with exit code 1; its traceback is in the file the line names, and on the
    screen with -v."""
    import logging

    from hbase_migrate.wal import reader

    def planted(*args: object, **kwargs: object) -> None:
        raise KeyError("planted\nsecond line")

    monkeypatch.setattr(reader.WalReader, "__init__", planted)
    monkeypatch.setenv("HBASE_MIGRATE_LOG_DIR", str(tmp_path / "logs"))
    wal = tmp_path / "x.wal"
    wal.write_bytes(b"PWAL")
    logging.getLogger().setLevel(logging.WARNING)
    with pytest.raises(SystemExit) as exit_info:
        main(["wal", "dump", str(wal)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1
    assert len(err.splitlines()) == 1, err
    assert err.startswith("hbase-migrate: error: unexpected KeyError: 'planted\\nsecond line' "
                          "(traceback in ")
    saved, = (tmp_path / "logs").iterdir()
    assert str(saved) in err
    assert "Traceback (most recent call last)" in saved.read_text()
    assert "in planted" in saved.read_text()

    with pytest.raises(SystemExit):
        main(["-v", "wal", "dump", str(wal)])
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.rstrip().splitlines()[-1].endswith("(traceback above)")
    logging.getLogger().setLevel(logging.WARNING)


def test_the_classes_that_fail_a_step_at_once() -> None:
    """A scheduler does not retry a step for a wrong configuration or a quorum that never
    answered (a wrong address); it does for an outage of a service that answered before."""
    from hbase_migrate.cluster.errors import (
        ZooKeeperNeverAnsweredError,
        ZooKeeperUnreachableError,
    )
    from hbase_migrate.errors import ConfigError, WalError, fails_at_once
    from hbase_migrate.replay.outage import NeverAnsweredError

    at_once = [ConfigError("x"), ZooKeeperNeverAnsweredError("zk:1"),
               NeverAnsweredError("webhdfs")]
    retried = [ZooKeeperUnreachableError("zk:1"), WalError("f", "cut"), ValueError("v")]
    assert [fails_at_once(e) for e in at_once] == [True] * 3
    assert [fails_at_once(e) for e in retried] == [False] * 3
