"""A headless Chromium driven through the DevTools protocol (no extra package: the
``websockets`` client that Airflow brings), for checking pages in a real browser."""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any, Self


class Browser:
    """One page of a headless Chromium on a loopback DevTools port; a context manager."""

    def __init__(self, folder: Path, width: int = 1280, height: int = 1600) -> None:
        executable = shutil.which("chromium") or shutil.which("chromium-browser")
        if executable is None:
            raise FileNotFoundError("chromium is not installed (Debian: apt-get install "
                                    "chromium)")
        self.profile = folder / "chromium-profile"
        self.proc = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._id = 0
        self._exit = contextlib.ExitStack()
        try:
            self.ws = self._connect()
        except BaseException:
            self.close()
            raise

    def _connect(self, timeout: float = 60.0) -> Any:
        from websockets.sync.client import connect

        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=10) as answer:
            page = next(t for t in json.load(answer) if t["type"] == "page")
        return self._exit.enter_context(connect(page["webSocketDebuggerUrl"], max_size=None))

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=60))
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message["result"])

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def open(self, url: str) -> None:
        self.call("Page.enable")
        self.call("Page.navigate", url=url)

    def wait_for(self, expression: str, timeout: float = 60.0) -> Any:
        """The value of ``expression`` once it is truthy."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:g} s waiting for {expression}")
            time.sleep(0.25)

    def screenshot(self, path: Path) -> bytes:
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        path.write_bytes(data)
        return data

    def close(self) -> None:
        self._exit.close()
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
