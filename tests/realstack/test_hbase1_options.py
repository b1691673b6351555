"""What the HBase 1.x stack is asked for, checked before any JVM starts: the options it does
not run are refused by name; later 1.x releases get the last ``hbase-thrift`` on Maven
Central."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from realstack.hbase import RealHBaseOptions, _thrift_version, is_1x
from realstack.maven import RealStackError


def test_options_the_1x_stack_does_not_run_are_refused_by_name(tmp_path: Path) -> None:
    asked = RealHBaseOptions(hbase_version="1.4.13", value_compression="gz", kerberos=True)
    with pytest.raises(RealStackError, match=r"HBase 1\.4\.13: .*--value-compression, "
                                             r"--kerberos \(WAL value compression"):
        asked.arguments(tmp_path)
    args = RealHBaseOptions(hbase_version="1.4.13", wal_compression="dict+tags"
                            ).arguments(tmp_path)
    assert args[args.index("--wal-compression") + 1] == "dict+tags"
    # the same options on 2.x are passed on
    assert "--thrift-http" in RealHBaseOptions(thrift_http=True).arguments(tmp_path)


def test_rpc_tls_is_refused_before_hbase_2_6(tmp_path: Path) -> None:
    for version in ("1.4.13", "2.4.18", "2.5.10"):
        with pytest.raises(RealStackError, match=rf"HBase {re.escape(version)}: TLS on "
                                                 r"HBase's RPC \(--rpc-tls\) came with HBase "
                                                 r"2\.6"):
            RealHBaseOptions(hbase_version=version, rpc_tls=True).arguments(tmp_path)
    RealHBaseOptions(hbase_version="2.6.1", rpc_tls=True).arguments(tmp_path)
    RealHBaseOptions(hbase_version="3.0.0-beta-1", rpc_tls=True).arguments(tmp_path)


def test_1x_lines_and_their_thrift_gateways() -> None:
    assert is_1x("1.2.6") and is_1x("1.7.2") and not is_1x("2.6.1")
    assert _thrift_version("1.2.6") == "1.2.6"
    assert _thrift_version("1.4.13") == "1.4.13"
    assert _thrift_version("1.4.14") == "1.4.13"  # no hbase-thrift 1.4.14 on Maven Central
    assert _thrift_version("1.7.2") == "1.4.13"
