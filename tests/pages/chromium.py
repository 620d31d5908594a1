"""Drive the system Chromium (/usr/bin/chromium) over the DevTools protocol, standard library only.

Why the DevTools protocol and not Playwright: Playwright for Python brings its own Node
driver and expects a browser build of its own version, while the project promises to test
in the Chromium Debian installs; the protocol is what Playwright speaks underneath anyway.
With ``--remote-debugging-pipe`` Chromium reads commands on file descriptor 3 and answers on
4 (JSON messages ended by a NUL byte), so no port is opened, no WebSocket library is needed
and nothing reaches the network. A handful of commands does all the tests need: open a
page, evaluate a script (awaiting its promise), put files into an ``<input type=file>``,
set the window size, take a screenshot.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic", "--hide-scrollbars",
         "--remote-debugging-pipe"]


# a hang guard, not a speed limit: a page that never answers fails the test instead of stalling it
READ_TIMEOUT = 300


class BrowserError(RuntimeError):
    pass


def executable() -> str | None:
    return shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


class Chromium:
    """One headless Chromium with a fresh profile; use as a context manager."""

    def __init__(self):
        found = executable()
        if not found:
            raise BrowserError("chromium is not installed (Debian: apt-get install -y chromium; ./dev installs it)")
        self.profile = tempfile.TemporaryDirectory(prefix="pbem-chromium-")
        self._log = tempfile.TemporaryFile()
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # above 9, so that moving one end to fd 3 or 4 never overwrites the other
        for name in ("to_browser_r", "from_browser_w"):
            fd = locals()[name]
            high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
            os.close(fd)
            if name == "to_browser_r":
                to_browser_r = high
            else:
                from_browser_w = high
        # Chromium expects its pipe ends as fds 3 (commands in) and 4 (answers out): the
        # shell moves them there, whatever numbers they have here
        command = [found, *FLAGS, f"--user-data-dir={self.profile.name}", "about:blank"]
        self.process = subprocess.Popen(
            ["/bin/bash", "-c", f'exec "$@" 3<&{to_browser_r} 4>&{from_browser_w}', "bash", *command],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log,
            pass_fds=(to_browser_r, from_browser_w))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._id = 0
        self.session = None

    def __enter__(self) -> "Chromium":
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self.profile.cleanup()

    # ------------------------------------------------------------------ the wire

    def _read_message(self) -> dict:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], READ_TIMEOUT)
            if not ready:
                raise BrowserError(f"chromium said nothing for {READ_TIMEOUT} s: {self.log_tail()}")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError(f"chromium closed the DevTools pipe: {self.log_tail()}")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def log_tail(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-1500:]

    def send(self, method: str, session: str | None = None, **params) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        try:
            os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise BrowserError(f"chromium has gone (exit {self.process.poll()}): {self.log_tail()}") from None
        while True:
            answer = self._read_message()
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error'].get('message')}")
                return answer.get("result", {})
            self.on_event(answer)

    def call(self, method: str, **params) -> dict:
        return self.send(method, self.session, **params)

    def on_event(self, message: dict) -> None:
        if message.get("method") == "Page.loadEventFired":
            self._loaded = True
        if message.get("method") == "Runtime.consoleAPICalled":
            self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in message["params"]["args"]))

    console: list = []

    # ------------------------------------------------------------------ what tests use

    def open(self, url: str) -> None:
        self.console = []
        self._loaded = False
        if "loaderId" not in self.call("Page.navigate", url=url):
            return  # a move within the same document (#fragment): no load to wait for
        while not self._loaded:
            self.on_event(self._read_message())

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (a promise is awaited); its exception raises."""
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"script failed: {text}")
        return result["result"].get("value")

    def set_files(self, selector: str, paths: list[Path]) -> None:
        node = self.call("DOM.getDocument")["root"]["nodeId"]
        found = self.call("DOM.querySelector", nodeId=node, selector=selector)["nodeId"]
        self.call("DOM.setFileInputFiles", nodeId=found, files=[str(p) for p in paths])

    def drop_files(self, selector: str, paths: list[Path]) -> None:
        """Drag files from outside the browser and drop them on the element, as a user does."""
        x, y = self.evaluate(f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                             f" return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        data = {"items": [], "files": [str(p) for p in paths], "dragOperationsMask": 1}
        for kind in ("dragEnter", "dragOver", "drop"):
            self.call("Input.dispatchDragEvent", type=kind, x=x, y=y, data=data)

    def set_size(self, width: int, height: int, mobile: bool = False, scale: float = 1) -> None:
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=scale, mobile=mobile)

    def screenshot(self, path: Path, full_page: bool = True) -> bytes:
        params = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        data = base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])
        Path(path).write_bytes(data)
        return data
