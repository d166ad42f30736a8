"""``ember.hub`` against ``torch.hub``: the cache directory, hubconf entry points from a
directory, downloads over ``file://`` and a loopback HTTP server (hash prefixes checked),
checkpoints by URL, and GitHub repositories served by a loopback stand-in for github.com.
Nothing here reaches the internet."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import socket
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ember
from tests.conftest import requires_torch, torch

HUBCONF = '''
dependencies = ["json"]


def add(a, b=1):
    """Adds b to a."""
    return a + b


def linear(n=3):
    """A Linear layer of the library that imports this hubconf."""
    import ember
    return ember.nn.Linear(2, n)


def _private():
    return 0


not_callable = 5
'''


@pytest.fixture
def hub_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh ``get_dir()`` for ember (and for torch, where a test compares)."""
    d = tmp_path / "hub"
    monkeypatch.setattr(ember.hub, "_hub_dir", str(d))
    if torch is not None:
        monkeypatch.setattr(torch.hub, "_hub_dir", str(d))
    yield d


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    d = tmp_path / "repo"
    d.mkdir()
    (d / "hubconf.py").write_text(HUBCONF)
    return d


# --------------------------------------------------------------------------- the directory


@requires_torch
@pytest.mark.parametrize(
    "env",
    [
        {},
        {"XDG_CACHE_HOME": "/x/cache"},
        {"TORCH_HOME": "/t/home"},
        {"TORCH_HOME": "~/th", "XDG_CACHE_HOME": "/x"},
    ],  # fmt: skip
    ids=["default", "xdg", "torch_home", "torch_home_user"],
)
def test_get_dir_is_pytorchs(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EMBER_HOME", "TORCH_HOME", "XDG_CACHE_HOME", "TORCH_HUB"):
        monkeypatch.delenv(name, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    assert ember.hub.get_dir() == torch.hub.get_dir()


def test_ember_home_moves_embers_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", "/t")
    monkeypatch.setenv("EMBER_HOME", "/e")
    assert ember.hub.get_dir() == "/e/hub"
    ember.hub.set_dir("~/elsewhere")
    assert ember.hub.get_dir() == os.path.expanduser("~/elsewhere")


# --------------------------------------------------------------------------- a local hubconf


def test_load_list_help_from_a_directory(repo: Path) -> None:
    assert ember.hub.load(str(repo), "add", 2, source="local", b=5) == 7
    layer = ember.hub.load(str(repo), "linear", source="local", n=4)
    assert isinstance(layer, ember.nn.Linear) and layer.out_features == 4
    assert ember.hub.list(str(repo), source="local") == ["add", "linear"]
    assert ember.hub.help(str(repo), "add", source="local") == "Adds b to a."


@requires_torch
def test_local_load_and_its_errors_are_pytorchs(repo: Path) -> None:
    def outcome(lib: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return lib.hub.load(*args, **kwargs)
        except (RuntimeError, ValueError) as e:
            return type(e).__name__, str(e)

    for args, kwargs in [
        ((str(repo), "add", 1), {"source": "local"}),
        ((str(repo), "add", 1), {"source": "LOCAL", "b": 3}),
        ((str(repo), "nope"), {"source": "local"}),
        ((str(repo), "not_callable"), {"source": "local"}),
        ((str(repo), 3), {"source": "local"}),
        ((str(repo), "add"), {"source": "svn"}),
    ]:
        assert outcome(ember, *args, **kwargs) == outcome(torch, *args, **kwargs), args
    (repo / "hubconf.py").write_text(HUBCONF.replace('["json"]', '["json", "no_such_pkg_x"]'))
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="^Missing dependencies: no_such_pkg_x$"):
            lib.hub.load(str(repo), "add", 1, source="local")


def test_a_directory_without_hubconf_says_so(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no hubconf.py in"):
        ember.hub.load(str(tmp_path), "add", source="local")


# --------------------------------------------------------------------------- downloads


class _Server:
    """A loopback HTTP server answering from ``routes`` (path with query -> bytes)."""

    def __init__(self) -> None:
        self.routes: dict[str, bytes] = {}
        self.seen: list[str] = []
        routes, seen = self.routes, self.seen

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802  (http.server's name)
                seen.append(self.path)
                body = routes.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


def _checkpoint() -> tuple[bytes, dict[str, Any]]:
    state = {"w": ember.arange(6.0).reshape(2, 3), "b": ember.tensor([1, 2])}
    buf = io.BytesIO()
    ember.save(state, buf)
    return buf.getvalue(), state


@requires_torch
def test_download_url_to_file_over_file_urls_as_pytorch(tmp_path: Path) -> None:
    data = b"some bytes " * 1000
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    for lib in (ember, torch):
        dst = tmp_path / f"{lib.__name__}.bin"
        lib.hub.download_url_to_file(src.as_uri(), str(dst), digest[:8], progress=False)
        assert dst.read_bytes() == data
        bad = tmp_path / f"{lib.__name__}-bad.bin"
        with pytest.raises(
            RuntimeError, match=f'invalid hash value \\(expected "00", got "{digest}"'
        ):
            lib.hub.download_url_to_file(src.as_uri(), str(bad), "00", progress=False)
        assert not bad.exists() and not any(tmp_path.glob("*.partial"))


def test_download_over_http_shows_progress(
    tmp_path: Path, server: _Server, capsys: pytest.CaptureFixture[str]
) -> None:
    server.routes["/w.bin"] = b"x" * 300_000
    dst = tmp_path / "w.bin"
    ember.hub.download_url_to_file(server.url + "/w.bin", str(dst))
    assert dst.read_bytes() == b"x" * 300_000
    assert "100.0%" in capsys.readouterr().err
    with pytest.raises(Exception, match="404"):  # an HTTP error is PyTorch's HTTPError
        ember.hub.download_url_to_file(server.url + "/missing", str(tmp_path / "m"))


def test_a_url_that_cannot_be_reached_says_so(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    with pytest.raises(RuntimeError, match=f"could not download http://127.0.0.1:{port}/w"):
        ember.hub.download_url_to_file(f"http://127.0.0.1:{port}/w", str(tmp_path / "w"))


@requires_torch
def test_load_state_dict_from_url_checks_the_hash_and_caches(
    tmp_path: Path, server: _Server, hub_dir: Path
) -> None:
    data, state = _checkpoint()
    name = f"weights-{hashlib.sha256(data).hexdigest()[:10]}.pt"
    server.routes["/" + name] = data
    server.routes["/weights-deadbeef.pt"] = data
    got = ember.hub.load_state_dict_from_url(server.url + "/" + name, check_hash=True)
    assert (hub_dir / "checkpoints" / name).exists()
    assert got.keys() == state.keys() and all(ember.equal(got[k], state[k]) for k in state)
    want = torch.hub.load_state_dict_from_url(
        server.url + "/" + name, model_dir=str(tmp_path / "t"), check_hash=True
    )
    assert {k: v.tolist() for k, v in want.items()} == {k: v.tolist() for k, v in got.items()}
    del server.routes["/" + name]  # the cached copy serves the second call
    again = ember.hub.load_state_dict_from_url(server.url + "/" + name, progress=False)
    assert ember.equal(again["w"], state["w"])
    for lib, where in ((ember, None), (torch, str(tmp_path / "t"))):
        with pytest.raises(RuntimeError, match='invalid hash value \\(expected "deadbeef"'):
            lib.hub.load_state_dict_from_url(
                server.url + "/weights-deadbeef.pt", model_dir=where, check_hash=True
            )
    named = ember.hub.load_state_dict_from_url(
        server.url + "/weights-deadbeef.pt", file_name="mine.pt", map_location="meta"
    )
    assert (hub_dir / "checkpoints" / "mine.pt").exists() and named["w"].is_meta


def test_a_zip_of_one_checkpoint_is_extracted_with_pytorchs_warning(
    tmp_path: Path, hub_dir: Path
) -> None:
    data, state = _checkpoint()
    legacy = tmp_path / "legacy.zip"
    with zipfile.ZipFile(legacy, "w") as z:
        z.writestr("inner.pt", data)
    with pytest.warns(FutureWarning, match="Falling back to the old format < 1.6"):
        got = ember.hub.load_state_dict_from_url(legacy.as_uri(), progress=False)
    assert ember.equal(got["w"], state["w"]) and (hub_dir / "checkpoints" / "inner.pt").exists()


# --------------------------------------------------------------------------- GitHub


def _zipball(top: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(f"{top}/hubconf.py", HUBCONF)
        z.writestr(f"{top}/README", "a repo")
    return buf.getvalue()


@pytest.fixture
def github(server: _Server, monkeypatch: pytest.MonkeyPatch) -> _Server:
    """``server`` standing in for github.com and its API, for ``owner/repo``."""
    monkeypatch.setattr(ember.hub, "GITHUB_URL", server.url)
    monkeypatch.setattr(ember.hub, "GITHUB_API_URL", server.url)
    branches = json.dumps([{"name": "main", "commit": {"sha": "abc123"}}]).encode()
    server.routes.update({
        "/owner/repo/tree/main/": b"ok",
        "/repos/owner/repo/branches?per_page=100&page=1": branches,
        "/repos/owner/repo/branches?per_page=100&page=2": b"[]",
        "/repos/owner/repo/tags?per_page=100&page=1": b"[]",
        "/owner/repo/zipball/main": _zipball("owner-repo-abc123"),
        "/owner/repo/zipball/abc123": _zipball("owner-repo-abc123"),
    })  # fmt: skip
    return server


def test_github_download_validate_extract_and_reuse(
    github: _Server, hub_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ember.hub.load("owner/repo", "add", 1, trust_repo=True) == 2  # ref: main exists
    assert (hub_dir / "owner_repo_main" / "hubconf.py").exists()
    assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"
    assert "/repos/owner/repo/branches?per_page=100&page=1" in github.seen
    assert not list(hub_dir.glob("*.zip"))
    github.seen.clear()
    assert ember.hub.list("owner/repo:main") == ["add", "linear"]  # cached, trusted now
    assert ember.hub.help("owner/repo:main", "add") == "Adds b to a."
    assert github.seen == [] and "Using cache found in" in capsys.readouterr().err
    ember.hub.load("owner/repo:abc123", "add", 1, skip_validation=True, force_reload=True)
    assert (hub_dir / "owner_repo_abc123").exists()


def test_github_refuses_a_ref_the_repository_does_not_have(github: _Server, hub_dir: Path) -> None:
    with pytest.raises(ValueError, match="Cannot find nope in https://github.com/owner/repo"):
        ember.hub.load("owner/repo:nope", "add", trust_repo=True)


def test_github_asks_before_trusting(
    github: _Server, hub_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    with pytest.raises(Exception, match="Untrusted repository"):
        ember.hub.load("owner/repo:main", "add", 1)
    monkeypatch.setattr("builtins.input", lambda prompt: "yes")
    assert ember.hub.load("owner/repo:main", "add", 1) == 2
    assert "owner_repo" in (hub_dir / "trusted_list").read_text()


def test_github_unreachable_names_the_repository(
    hub_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(ember.hub, "GITHUB_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setattr(ember.hub, "GITHUB_API_URL", f"http://127.0.0.1:{port}")
    with pytest.raises(RuntimeError, match="for the repository 'owner/repo'"):
        ember.hub.load("owner/repo:main", "add", trust_repo=True)
    with pytest.raises(RuntimeError, match="repository owner/repo is not in the cache"):
        ember.hub.load("owner/repo", "add", trust_repo=True)
    cached = hub_dir / "owner_repo_master"
    cached.mkdir(parents=True)
    (cached / "hubconf.py").write_text(HUBCONF)
    assert ember.hub.load("owner/repo", "add", 4, trust_repo=True) == 5  # offline: the cache
