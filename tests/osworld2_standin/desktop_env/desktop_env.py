"""DesktopEnv over a guest server: setup steps and weighted checkpoints, as the tests need."""

import json
import sys
import time
import urllib.parse
import urllib.request
import uuid

from desktop_env.controllers import website
from desktop_env.evaluators import model_client


def site_state(site, cookie, state=None):
    """A mock site's state for a cookie (`/api/state`), read or, with `state`, replaced: from this
    process, as upstream's setup and getters do."""
    url = f"{website.build_website_url(site)}/api/state?cookie={urllib.parse.quote(cookie)}"
    data = None if state is None else state.encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=60) as answer:
        return answer.read().decode()


class PythonController:
    def __init__(self, vm_ip, server_port):
        self.base = f"http://{vm_ip}:{server_port}"

    def _post(self, route, data=None, json_body=None, headers=None):
        headers = dict(headers or {})
        if json_body is not None:
            data = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base + route, data=data or b"", headers=headers)
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.read()

    def execute(self, command, shell=True):
        return json.loads(self._post("/execute", json_body={"command": command, "shell": shell}))

    def get_file(self, path):
        try:
            return self._post("/file", data=urllib.parse.urlencode({"file_path": path}).encode())
        except urllib.error.HTTPError:
            return None

    def upload(self, path, data):
        boundary = uuid.uuid4().hex
        head = f"--{boundary}\r\nContent-Disposition: form-data; name="
        body = (
            (
                f'{head}"file_path"\r\n\r\n{path}\r\n'
                f'{head}"file_data"; filename="f"\r\nContent-Type: application/octet-stream\r\n\r\n'
            ).encode()
            + data
            + f"\r\n--{boundary}--\r\n".encode()
        )
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        return self._post("/setup/upload", data=body, headers=headers)

    def screenshot(self):
        with urllib.request.urlopen(self.base + "/screenshot", timeout=30) as response:
            return response.read()

    def screen_size(self):
        return json.loads(self._post("/screen_size"))


class DesktopEnv:
    def __init__(
        self,
        provider_name,
        path_to_vm,
        action_space="pyautogui",
        screen_size=(1920, 1080),
        headless=True,
        os_type="Ubuntu",
        require_a11y_tree=False,
        cache_dir="cache",
    ):
        assert provider_name == "remote"
        ip, port, cdp_port = path_to_vm.split(":")[:3]
        self.controller = PythonController(ip, int(port))
        self.cdp = f"http://{ip}:{cdp_port}"
        self.config = None

    def reset(self, task_config):
        self.config = task_config
        for step in task_config.get("config", []):
            kind, params = step["type"], step.get("parameters", {})
            if kind == "upload_file":
                self.controller.upload(params["path"], params["content"].encode())
            elif kind == "execute":
                self.controller.execute(params["command"])
            elif kind == "launch":
                body = {"command": params["command"], "shell": params.get("shell", False)}
                self.controller._post("/setup/launch", json_body=body)
            elif kind == "chrome_open_tabs":
                self._open_tabs(params["urls_to_open"])
            elif kind == "site_state":
                site_state(params["site"], params["cookie"], params["state"])
            elif kind == "sleep":
                time.sleep(params["seconds"])
            else:
                raise ValueError(f"unknown setup step {kind}")
        return {"screenshot": self.controller.screenshot()}

    def _open_tabs(self, urls):
        """Over Chrome's DevTools from the host, as upstream's setup controller does (it uses
        Playwright's connect_over_cdp; plain HTTP is enough for the stand-in)."""
        for _attempt in range(60):
            try:
                with urllib.request.urlopen(self.cdp + "/json/version", timeout=10):
                    break
            except (OSError, ValueError):
                time.sleep(1)
        for url in urls:
            request = urllib.request.Request(self.cdp + "/json/new?" + url, method="PUT")
            with urllib.request.urlopen(request, timeout=30) as response:
                response.read()

    def _tabs(self):
        with urllib.request.urlopen(self.cdp + "/json/list", timeout=30) as response:
            return [tab.get("url", "") for tab in json.load(response)]

    def evaluate(self):
        checkpoints = []
        for checkpoint in self.config["evaluator"]["checkpoints"]:
            value = self._check(checkpoint)
            checkpoints.append(
                {"name": checkpoint["name"], "weight": checkpoint["weight"], "score": value}
            )
        if website.TRIES:  # into the bridge's log, where the tests read how each probe went
            print("website probes:", json.dumps(website.TRIES), file=sys.stderr, flush=True)
        total = sum(c["weight"] for c in checkpoints)
        score = sum(c["weight"] * c["score"] for c in checkpoints) / total
        return {"score": score, "checkpoints": checkpoints}

    def _check(self, checkpoint):
        if checkpoint["kind"] == "chrome_tab":
            return float(checkpoint["expected"] in self._tabs())
        if checkpoint["kind"] == "site_state":
            state = site_state(checkpoint["site"], checkpoint["cookie"])
            return float(checkpoint["expected"] in state)
        data = self.controller.get_file(checkpoint["path"])
        text = data.decode() if data is not None else ""
        if checkpoint["kind"] == "contains":
            return float(checkpoint["expected"] in text)
        if checkpoint["kind"] == "equals":
            return float(checkpoint["expected"] == text)
        if checkpoint["kind"] == "judge":
            prompt = f"{checkpoint['question']}\n\n{text}\nAnswer yes or no."
            try:
                verdict = model_client.generate_text(prompt, max_tokens=5)
            except Exception:
                return 0.0  # as upstream: a failed judge call silently scores 0
            return float(str(verdict).strip().lower().startswith("yes"))
        raise ValueError(checkpoint["kind"])
