"""A real headless Chromium driven over the Chrome DevTools Protocol (CDP), with no
client library beyond tornado's websocket (a dependency of distributed).

The dashboard's pages are bokeh documents: they draw after a websocket session to the
scheduler has started, inside shadow roots that ``chromium --dump-dom`` does not show.
So a test opens the page in a browser that stays up, and asks it (``Runtime.evaluate``)
for the text of the page's elements, shadow roots included, until what it expects is
there.  Every process the browser starts is ended by PID when it closes.

Chromium comes from ``make chromium`` (Debian's package); :data:`CHROMIUM` is None
without it (the tests that need it skip and say why).
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import psutil

from procutil import end_processes

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

#: JS: every element whose class starts with ``ss-`` -> its text (shadow roots
#: included), and the whole text of the page under ``"_text"``
TEXTS = r"""(() => {
  const found = {}, all = [];
  const walk = (n) => {
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.childNodes) {
      if (c.nodeType === 3) { all.push(c.textContent); continue; }
      if (c.nodeType !== 1 || c.tagName === "STYLE" || c.tagName === "SCRIPT") continue;
      for (const k of c.classList || []) if (k.startsWith("ss-")) found[k] = c.textContent;
      walk(c);
    }
  };
  walk(document.body);
  found._text = all.join(" ").replace(/\s+/g, " ");
  return JSON.stringify(found);
})()"""


class Browser:
    """One headless Chromium with one page; ``with Browser(tmp) as b: b.open(url)``."""

    def __init__(self, tmp: Path, *, width: int = 1280, height: int = 1100, timeout: float = 60):
        if CHROMIUM is None:
            raise RuntimeError("no chromium")
        self.timeout = timeout
        profile = Path(tmp) / "chromium-profile"
        profile.mkdir(parents=True, exist_ok=True)
        (profile / "DevToolsActivePort").unlink(missing_ok=True)    # a former run's port
        self.profile = profile
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
             f"--window-size={width},{height}", "--remote-debugging-port=0",
             f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            # its crash handler detaches from it (no child, a session of its own): with
            # its database in the profile, close() finds it by that path
            env={**os.environ, "XDG_CONFIG_HOME": str(profile)})
        self.loop = asyncio.new_event_loop()
        self.ws = None
        self._id = 0
        try:
            port = self._port(profile / "DevToolsActivePort")
            pages = self._get(f"http://127.0.0.1:{port}/json/list")
            page = next(p for p in pages if p.get("type") == "page")
            from tornado.websocket import websocket_connect

            async def connect():
                return await websocket_connect(page["webSocketDebuggerUrl"],
                                               max_message_size=256 * 2**20)
            self.ws = self._wait(connect())
            self.call("Page.enable")
            self.call("Runtime.enable")
        except BaseException:
            self.close()
            raise

    def _port(self, path: Path) -> int:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            try:
                return int(path.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                time.sleep(0.05)
        raise TimeoutError("chromium did not open its debugging port")

    def _get(self, url: str):
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    return json.loads(r.read())
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _wait(self, coro):
        return self.loop.run_until_complete(asyncio.wait_for(coro, self.timeout))

    def call(self, method: str, **params) -> dict:
        """One CDP command; its result (events in between are skipped)."""
        self._id += 1
        ident = self._id

        async def go():
            await self.ws.write_message(json.dumps({"id": ident, "method": method,
                                                    "params": params}))
            while True:
                msg = await self.ws.read_message()
                if msg is None:
                    raise ConnectionError("chromium closed the debugging connection")
                msg = json.loads(msg)
                if msg.get("id") == ident:
                    if "error" in msg:
                        raise RuntimeError(f"{method}: {msg['error']}")
                    return msg.get("result", {})
        return self._wait(go())

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def texts(self) -> dict:
        """The ``ss-*`` elements' texts and the page's whole text (see :data:`TEXTS`)."""
        r = self.call("Runtime.evaluate", expression=TEXTS, returnByValue=True)
        return json.loads(r["result"]["value"])

    def wait_for(self, predicate, timeout: float = 60.0, what: str = "the page") -> dict:
        """Poll :meth:`texts` until ``predicate(texts)``; the texts that satisfied it."""
        deadline = time.monotonic() + timeout
        last = {}
        while True:
            try:
                last = self.texts()
                if predicate(last):
                    return last
            except (KeyError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} did not show what was expected in {timeout:g} s; "
                                     f"it showed: {last.get('_text', '')[:2000]}")
            time.sleep(0.2)

    def screenshot(self, path: Path) -> Path:
        import base64

        r = self.call("Page.captureScreenshot", format="png")
        Path(path).write_bytes(base64.b64decode(r["data"]))
        return Path(path)

    def close(self) -> None:
        try:
            if self.ws is not None:
                self.ws.close()
        finally:
            try:
                kids = [c.pid for c in psutil.Process(self.proc.pid).children(recursive=True)]
            except psutil.NoSuchProcess:
                kids = []
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
            end_processes(kids + [p for p in self._detached() if p not in kids], grace=1)
            self.loop.close()

    def _detached(self) -> list[int]:
        """Processes that name this browser's profile but are not its children (the
        crash handler)."""
        found = []
        for p in psutil.process_iter(["pid", "cmdline"]):
            try:
                if any(str(self.profile) in arg for arg in p.info["cmdline"] or ()):
                    found.append(p.info["pid"])
            except (psutil.Error, TypeError):
                continue
        return found

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False
