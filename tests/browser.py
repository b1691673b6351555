"""A real headless Chromium driven through the DevTools protocol (a websocket), for tests
that look at pages as a user would: open a URL, record every request the page makes, read
values from the page, take PNG screenshots. Also a command that screenshots a page for the
docs::

    python -m tests.browser state/demo/report.html docs/report.png --width 1280 --scale 0.5

    with Browser() as browser:
        browser.open(path.as_uri())
        png = browser.screenshot(full_page=True)
        assert all(url.startswith("data:") for url in browser.requests[1:])
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import urllib.request
import zlib
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from websockets.sync.client import ClientConnection, connect

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    return next((path for name in CHROMIUM if (path := shutil.which(name))), None)


class BrowserError(RuntimeError):
    """Chromium did not start, or a DevTools call failed or timed out."""


class Browser:
    """One headless Chromium with one page; close it (or use ``with``) to stop it and every
    process it started."""

    def __init__(self, *, width: int = 1280, height: int = 900, timeout: float = 60.0) -> None:
        self.width, self.height, self.timeout = width, height, timeout
        self.requests: list[str] = []  # every URL the page asked for, in order
        self.failed: list[str] = []  # requests that failed (URL: error)
        self._events: list[dict[str, Any]] = []
        self._urls: dict[str, str] = {}  # request id: URL
        self._next_id = 0
        self._profile = tempfile.mkdtemp(prefix="hbm-chromium-")
        self._proc: subprocess.Popen[bytes] | None = None
        self._ws: ClientConnection | None = None
        self._stack = ExitStack()

    def __enter__(self) -> Self:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _start(self) -> None:
        binary = find_chromium()
        if binary is None:
            raise BrowserError(f"no Chromium found (looked for {', '.join(CHROMIUM)})")
        args = [binary, "--headless=new", "--remote-debugging-port=0",
                "--remote-allow-origins=*", f"--user-data-dir={self._profile}",
                "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-extensions", "--hide-scrollbars",
                "--disable-crash-reporter", "--disable-breakpad",
                "--force-device-scale-factor=1", "--font-render-hinting=none",
                f"--window-size={self.width},{self.height}", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root otherwise
        self._proc = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while not port_file.exists() or not port_file.read_text().strip():
            if self._proc.poll() is not None:
                raise BrowserError(f"Chromium exited with {self._proc.returncode} at start")
            if time.monotonic() > deadline:
                raise BrowserError(f"Chromium did not open DevTools in {self.timeout:.0f}s")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                    timeout=self.timeout) as reply:
            targets = json.load(reply)
        page = next(t for t in targets if t.get("type") == "page")
        self._ws = self._stack.enter_context(connect(
            page["webSocketDebuggerUrl"], max_size=None, open_timeout=self.timeout))
        self.call("Network.enable")
        self.call("Page.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)

    @property
    def pid(self) -> int | None:
        """Chromium's process id, also its process group's (None when not running)."""
        return self._proc.pid if self._proc is not None else None

    def close(self) -> None:
        self._ws = None
        self._stack.close()
        if self._proc is not None:
            _stop_group(self._proc)
            self._proc = None
        shutil.rmtree(self._profile, ignore_errors=True)

    # -- the protocol -----------------------------------------------------------------------

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result; events met meanwhile are kept."""
        if self._ws is None:
            raise BrowserError("the browser is not running")
        self._next_id += 1
        ident = self._next_id
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._receive(deadline, method)
            if message.get("id") == ident:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))

    def _receive(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        assert self._ws is not None
        left = deadline - time.monotonic()
        if left <= 0:
            raise BrowserError(f"no answer to {waiting_for} in {self.timeout:.0f}s")
        try:
            message: dict[str, Any] = json.loads(self._ws.recv(timeout=left))
        except TimeoutError:
            raise BrowserError(f"no answer to {waiting_for} in {self.timeout:.0f}s") from None
        if "method" in message:
            self._event(message)
        return message

    def _event(self, message: dict[str, Any]) -> None:
        self._events.append(message)
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
            self._urls[params["requestId"]] = params["request"]["url"]
        elif message["method"] == "Network.loadingFailed":
            url = self._urls.get(params.get("requestId", ""), params.get("requestId"))
            self.failed.append(f"{url}: {params.get('errorText')}")

    def wait_for(self, event: str) -> dict[str, Any]:
        """The next (or an already received, unclaimed) event named ``event``."""
        for i, message in enumerate(self._events):
            if message["method"] == event:
                return dict(self._events.pop(i).get("params", {}))
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._receive(deadline, event)
            if message.get("method") == event:
                self._events.remove(message)
                return dict(message.get("params", {}))

    # -- what tests use ---------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Load ``url`` and wait until its load event (every resource loaded)."""
        self._events.clear()
        result = self.call("Page.navigate", url=url)
        if result.get("errorText"):
            raise BrowserError(f"cannot open {url}: {result['errorText']}")
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:60]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_until(self, expression: str, timeout: float | None = None) -> Any:
        """The value of ``expression`` once it is truthy, polled (pages that render after
        their load event: single-page applications)."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while not (value := self.evaluate(expression)):
            if time.monotonic() > deadline:
                raise BrowserError(f"not true within {limit:g}s: {expression}")
            time.sleep(0.25)
        return value

    def screenshot(self, *, full_page: bool = True, scale: float = 1.0,
                   clip: dict[str, float] | None = None) -> bytes:
        """A PNG of the viewport, the whole page (``full_page``) or ``clip`` (x, y, width,
        height in CSS pixels), at ``scale``."""
        if clip is None and full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}
        if clip is None:
            clip = {"x": 0, "y": 0, "width": self.width, "height": self.height}
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={**clip, "scale": scale})
        return base64.b64decode(shot["data"])


def _stop_group(proc: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    """SIGTERM Chromium's process group (its own session: the browser and its helpers),
    wait until every member is gone, SIGKILL what is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            proc.poll()  # reap the leader
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                proc.wait()
                return
            time.sleep(0.05)
    proc.wait(timeout)


# -- PNG: enough of a decoder to judge a screenshot ---------------------------------------------

def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def png_pixels(data: bytes) -> list[bytes]:
    """The rows of an 8-bit RGB or RGBA PNG (non-interlaced), unfiltered: one ``bytes`` of
    ``width * channels`` per row. Pure Python: keep the images small (``scale``)."""
    width, height = png_size(data)
    depth, color, _, _, interlace = data[24:29]
    channels = {2: 3, 6: 4}.get(color)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, color type {color}")
    pos, chunks = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            chunks.append(data[pos + 8:pos + 8 + length])
        pos += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc
                                      else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return rows


def colours(data: bytes) -> dict[tuple[int, ...], int]:
    """How many pixels of each colour (RGB) a small PNG holds."""
    rows = png_pixels(data)
    width, _ = png_size(data)
    channels = len(rows[0]) // width if rows else 3
    found: dict[tuple[int, ...], int] = {}
    for row in rows:
        for x in range(0, len(row), channels):
            key = tuple(row[x:x + 3])
            found[key] = found.get(key, 0) + 1
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description="Screenshot a page with headless Chromium.")
    parser.add_argument("page", help="a file or URL")
    parser.add_argument("out", type=Path, help="the PNG to write")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=0,
                        help="crop to this height in CSS pixels (default: the whole page)")
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    url = args.page if "://" in args.page else Path(args.page).absolute().as_uri()
    with Browser(width=args.width) as browser:
        browser.open(url)
        clip = {"x": 0, "y": 0, "width": args.width, "height": args.height} \
            if args.height else None
        png = browser.screenshot(scale=args.scale, clip=clip)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(png)
    width, height = png_size(png)
    print(f"{args.out}: {width}x{height}, {len(png)} bytes")


if __name__ == "__main__":
    main()
