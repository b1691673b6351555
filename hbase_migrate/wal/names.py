"""WAL file names and directories: what a path says about the file before it is opened.

HBase names a region server's WAL ``URLEncode(prefix) + "." + filenum + suffix``, where the
prefix is the server name (``host,port,startcode``), optionally followed by ``.meta`` (the
hbase:meta WAL, whose suffix is also ``.meta``) or by a multiwal group, and ``filenum`` is the
creation time in ms. Examples::

    host%2C16020%2C1700000000000.1700000123456                            default provider
    host%2C16020%2C1700000000000.meta.1700000123456.meta                  hbase:meta WAL
    host%2C16020%2C1700000000000.host%2C16020%2C1700000000000.regiongroup-0.1700000123456
                                                          multiwal, bounded/namespace groups
    host%2C16020%2C1700000000000.<encoded region>.1700000123456     multiwal, identity groups

Directories under the WAL root: ``WALs/<server>/`` (live), ``WALs/<server>-splitting/`` (a
dead server being split), ``oldWALs/`` or ``oldWALs/<server>/`` (archived),
``.../<region>/recovered.edits/<19-digit seqid>`` (split output), ``MasterData/WALs/...``
(the master's local store). ``oldWALs`` also holds files that are no region server WAL:
``pv2-<20 digits>.log`` procedure logs and ``*$masterlocalwal$`` master-store WALs.

The creation time follows HBase 2.6 ``WAL.getTimestamp``: split the name on ``.``; the last
part if it is all digits, else the second-to-last, else none. HBase 3.x uses the pattern
``(.+)\\.(\\d+)(\\.[0-9A-Za-z]+)?`` instead; both give the same answer for every name HBase
writes, and differ only on odd names (a trailing dot, a suffix with a dash).
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote_plus, urlsplit

META_SUFFIX = ".meta"
SPLITTING_SUFFIX = "-splitting"
MASTER_STORE_SUFFIX = "$masterlocalwal$"
LIVE_DIRS = frozenset({"WALs", ".logs"})  # .logs/.oldlogs: 0.94 layout
ARCHIVE_DIRS = frozenset({"oldWALs", ".oldlogs"})
RECOVERED_EDITS_DIR = "recovered.edits"
MASTER_DATA_DIR = "MasterData"

KINDS = ("wal", "meta", "recovered_edits", "procedure", "master_store", "unknown")
STATES = ("live", "splitting", "archived", "recovered_edits")

_SERVER_NAME = re.compile(r"([^,]+),(\d+),(\d+)", re.ASCII)
_PROCEDURE_LOG = re.compile(r"pv2-\d+\.log", re.ASCII)
_RECOVERED_EDITS = re.compile(r"-?\d+", re.ASCII)
# What follows the server name in a region server WAL name (decoded): [.<middle>].<ts>[.sfx]
_AFTER_SERVER = re.compile(r"(?:\.(?P<mid>.+))?\.(?P<ts>\d+)(?P<sfx>\.[0-9A-Za-z]+)?", re.ASCII)
_MAX_LONG = (1 << 63) - 1
# Java's URLEncoder leaves these as they are; a space becomes '+', all else %XX of UTF-8.
_URL_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-*_")


class ServerName(NamedTuple):
    """A region server's identity, ``host,port,startcode`` (HBase ``ServerName``)."""

    host: str
    port: int
    start_code: int

    @classmethod
    def parse(cls, text: str) -> ServerName:
        """Parse ``host,port,startcode``; the host is lower-cased, as HBase does.

        Raises ``ValueError`` naming the text when it is not of that form.
        """
        match = _SERVER_NAME.fullmatch(text)
        if match is None:
            raise ValueError(f"not a server name (expected host,port,startcode): {text!r}")
        return cls(match[1].lower(), int(match[2]), int(match[3]))

    def __str__(self) -> str:
        return f"{self.host.lower()},{self.port},{self.start_code}"


class WalFileInfo(NamedTuple):
    """What a WAL path says about the file. ``None`` where the path does not say.

    ``kind`` is one of ``KINDS``, ``state`` one of ``STATES`` or ``None``; ``server`` comes
    from the file name, or from the directory when the name carries none; ``dir_server`` is
    the server of a ``WALs/<server>[-splitting]/`` or ``oldWALs/<server>/`` directory;
    ``timestamp`` is the creation time from the name (ms); ``group`` the multiwal group.
    """

    path: str
    name: str
    kind: str
    server: ServerName | None
    dir_server: ServerName | None
    timestamp: int | None
    group: str | None
    meta: bool
    state: str | None

    @property
    def is_wal(self) -> bool:
        """True for files in the PWAL format that carry region edits (any kind but
        procedure logs, master-store WALs and unknown files)."""
        return self.kind in ("wal", "meta", "recovered_edits")


def java_url_encode(text: str) -> str:
    """``java.net.URLEncoder.encode(text, "UTF-8")``: how HBase encodes a WAL name prefix."""
    out: list[str] = []
    for byte in text.encode("utf-8"):
        if byte in _URL_SAFE:
            out.append(chr(byte))
        elif byte == 0x20:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def name_timestamp(name: str) -> int | None:
    """The creation time HBase reads from a WAL file name (``WAL.getTimestamp``), or None."""
    parts = name.split(".")
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()  # Java's String.split drops trailing empty strings
    if len(parts) <= 1:
        return None
    for candidate in (parts[-1], parts[-2]):
        if candidate.isascii() and candidate.isdigit():
            value = int(candidate)
            return value if value <= _MAX_LONG else None
    return None


def wal_file_name(
    server: ServerName,
    timestamp: int,
    *,
    group: str | None = None,
    meta: bool = False,
    repeat_server: bool = True,
) -> str:
    """The file name HBase gives a WAL of ``server`` created at ``timestamp`` (ms).

    ``group`` is a multiwal group: ``regiongroup-0`` (bounded strategy) or a namespace name
    (namespace strategy) put after the server name repeated; with ``repeat_server=False`` it
    is an identity-strategy group (an encoded region name) put after the server name once.
    ``meta`` names the hbase:meta WAL (no group).
    """
    if timestamp < 0:
        raise ValueError(f"a WAL creation time is not negative: {timestamp}")
    if meta and group is not None:
        raise ValueError("the hbase:meta WAL has no multiwal group")
    if meta:
        return f"{java_url_encode(f'{server}{META_SUFFIX}')}.{timestamp}{META_SUFFIX}"
    prefix = str(server)
    if group is not None:
        prefix = f"{server}.{server}.{group}" if repeat_server else f"{server}.{group}"
    return f"{java_url_encode(prefix)}.{timestamp}"


def server_dir_name(server: ServerName, *, splitting: bool = False) -> str:
    """The directory of a server's live WALs under ``WALs/`` (not URL-encoded)."""
    return f"{server}{SPLITTING_SUFFIX}" if splitting else str(server)


def split_path(path: str) -> list[str]:
    """Path components of a local path or of a URL's path (``webhdfs://nn:9870/hbase/...``).

    A URL's path is taken literally, as HBase prints WAL paths and as the WebHDFS source
    opens them: ``webhdfs://nn:9870/hbase/oldWALs/host%2C16020%2C1.17`` names the file
    ``host%2C16020%2C1.17``.
    """
    if "://" in path:
        path = urlsplit(path).path
    return [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]


def _parse_server(text: str) -> ServerName | None:
    try:
        return ServerName.parse(text)
    except ValueError:
        return None


def _directory(dirs: list[str]) -> tuple[str | None, ServerName | None]:
    """(state, directory server) from the directories above a file, nearest last."""
    parent = dirs[-1] if dirs else ""
    grandparent = dirs[-2] if len(dirs) > 1 else ""
    if parent == RECOVERED_EDITS_DIR:
        return "recovered_edits", None
    if parent in ARCHIVE_DIRS:
        return "archived", None
    if grandparent in ARCHIVE_DIRS:
        return "archived", _parse_server(parent)
    if grandparent in LIVE_DIRS:
        if parent.endswith(SPLITTING_SUFFIX):
            return "splitting", _parse_server(parent[: -len(SPLITTING_SUFFIX)])
        return "live", _parse_server(parent)
    return None, None


def _server_and_group(decoded: str, meta: bool) -> tuple[ServerName | None, str | None]:
    """Server name at the start of a decoded WAL name, and the multiwal group after it."""
    match = _SERVER_NAME.match(decoded)
    if match is None:
        return None, None
    server = ServerName(match[1].lower(), int(match[2]), int(match[3]))
    rest = _AFTER_SERVER.fullmatch(decoded, match.end())
    if rest is None or meta or rest["mid"] is None:
        return server, None
    mid: str = rest["mid"]
    repeated = f"{match[0]}."
    return server, mid[len(repeated) :] if mid.startswith(repeated) else mid


def parse_wal_path(path: str) -> WalFileInfo:
    """Read a WAL path (local, or the path of a URL) into a ``WalFileInfo``; never raises."""
    parts = split_path(path)
    name = parts[-1] if parts else ""
    dirs = parts[:-1]
    state, dir_server = _directory(dirs)
    meta = name.endswith(META_SUFFIX)
    bare = name.removesuffix(MASTER_STORE_SUFFIX)
    timestamp = name_timestamp(name)
    server, group = _server_and_group(unquote_plus(bare), meta)

    if _PROCEDURE_LOG.fullmatch(name):
        kind = "procedure"
    elif name.endswith(MASTER_STORE_SUFFIX) or MASTER_DATA_DIR in dirs:
        kind = "master_store"
    elif state == "recovered_edits":
        # Final files are named by their highest sequence id; ".temp" ones are being written.
        is_edits = _RECOVERED_EDITS.fullmatch(name) is not None or name.endswith(".temp")
        kind = "recovered_edits" if is_edits else "unknown"
        timestamp, server, group = None, None, None
    elif timestamp is not None:
        kind = "meta" if meta else "wal"
    else:
        kind = "unknown"
    return WalFileInfo(
        path=path,
        name=name,
        kind=kind,
        server=server or dir_server,
        dir_server=dir_server,
        timestamp=timestamp,
        group=group,
        meta=meta and kind == "meta",
        state=state,
    )
