"""``ember.hub``: PyTorch's ``torch.hub``. Entry points from a ``hubconf.py`` in a local
directory or a GitHub repository, and checkpoints from a URL, read with ``ember.load``.

# NOTE [hub directory]
``get_dir()`` is where downloads go: the directory ``set_dir`` gave, else ``$EMBER_HOME/hub``,
else ``$TORCH_HOME/hub``, else ``$XDG_CACHE_HOME/torch/hub`` (``~/.cache/torch/hub``). So
by default ember shares PyTorch's cache, as a PyTorch user expects: a checkpoint either
library downloaded is found by the other (``ember.load`` reads PyTorch's format), and
``TORCH_HOME`` moves both. ``EMBER_HOME`` moves ember's alone.

# NOTE [hub from GitHub]
``source="github"`` does what PyTorch's does, with ``urllib``: ``"owner/repo[:ref]"``
without a ref asks github.com whether ``main`` exists (else ``master``; offline, a cached
copy of either); unless ``skip_validation``, it checks the ref is a branch, tag or commit
of that repository through the GitHub API (``$GITHUB_TOKEN`` if set); it downloads the
``zipball`` into ``get_dir()``, extracts it (refusing entries that would land outside) as
``owner_repo_ref``, and reuses that copy until ``force_reload``. A repository neither in
``get_dir()/trusted_list``, nor already downloaded, nor owned by PyTorch's trusted owners
asks before its code runs (``trust_repo="check"`` or ``False``; ``True`` adds it to the
list). A network failure raises ``RuntimeError`` naming the repository and the URL.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

import ember

__all__ = [
    "download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url",
    "set_dir",
]  # fmt: skip

#: ``resnet18-bfd8deac.pth``: the hash prefix ``check_hash`` checks
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
READ_DATA_CHUNK = 128 * 1024
ENV_EMBER_HOME = "EMBER_HOME"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
DEFAULT_CACHE_DIR = "~/.cache"
#: the owners PyTorch's hub trusts without asking
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
#: where GitHub answers (module constants, so a test can serve them on the loopback)
GITHUB_URL = "https://github.com"
GITHUB_API_URL = "https://api.github.com"

_hub_dir: str | None = None


def get_dir() -> str:
    """The directory downloads go to (NOTE [hub directory]).

    >>> ember.hub.get_dir().endswith("hub")
    True
    """
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    home = os.getenv(ENV_EMBER_HOME) or os.getenv(ENV_TORCH_HOME)
    if home is None:
        home = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d: str | os.PathLike[str]) -> None:
    """Make ``d`` the directory downloads go to (``~`` expanded).

    >>> ember.hub.set_dir("~/models")  # doctest: +SKIP
    """
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# --------------------------------------------------------------------------- hubconf.py


@contextlib.contextmanager
def _on_sys_path(path: str) -> Iterator[None]:
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir: str) -> ModuleType:
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"ember.hub: no {MODULE_HUBCONF} in {repo_dir!r}: a hub directory defines its "
            "entry points there"
        )
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"ember.hub: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_dependencies(module: ModuleType) -> None:
    """``dependencies`` in a hubconf: the packages its entry points import, each checked to
    be importable, as PyTorch checks them."""
    needed = getattr(module, VAR_DEPENDENCY, None)
    if needed is None:
        return
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")


def _entry(module: ModuleType, model: Any) -> Callable[..., Any]:
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    _check_dependencies(module)
    fn = getattr(module, model, None) if model in dir(module) else None
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn  # type: ignore[no-any-return]


def _repo_dir(
    repo_or_dir: str,
    source: str,
    force_reload: bool,
    trust_repo: bool | str | None,
    verbose: bool,
    skip_validation: bool,
) -> str:
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "local":
        return repo_or_dir
    return _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose, skip_validation)


def list(  # noqa: A001  (PyTorch's name)
    github: str,
    force_reload: bool = False,
    skip_validation: bool = False,
    trust_repo: bool | str | None = "check",
    verbose: bool = True,
    *,
    source: str = "github",
) -> builtins.list[str]:
    """The callables a repository's ``hubconf.py`` defines (not those starting with ``_``).
    ``source="local"`` (ember's addition) reads a directory instead.

    >>> ember.hub.list("path/to/dir", source="local")  # doctest: +SKIP
    ['mlp']
    """
    repo_dir = _repo_dir(github, source, force_reload, trust_repo, verbose, skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(  # noqa: A001  (PyTorch's name)
    github: str,
    model: str,
    force_reload: bool = False,
    skip_validation: bool = False,
    trust_repo: bool | str | None = "check",
    *,
    source: str = "github",
) -> str | None:
    """The docstring of the entry point ``model``.

    >>> ember.hub.help("path/to/dir", "mlp", source="local")  # doctest: +SKIP
    'A two-layer perceptron.'
    """
    repo_dir = _repo_dir(github, source, force_reload, trust_repo, True, skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return _entry(module, model).__doc__


def load(
    repo_or_dir: str,
    model: str,
    *args: Any,
    source: str = "github",
    trust_repo: bool | str | None = "check",
    force_reload: bool = False,
    verbose: bool = True,
    skip_validation: bool = False,
    **kwargs: Any,
) -> Any:
    """``model(*args, **kwargs)``, the entry point of a GitHub repository's ``hubconf.py``
    (``"owner/repo[:ref]"``, NOTE [hub from GitHub]) or of a directory's (``source="local"``).

    >>> net = ember.hub.load("path/to/dir", "mlp", source="local", hidden=8)  # doctest: +SKIP
    """
    repo_dir = _repo_dir(repo_or_dir, source, force_reload, trust_repo, verbose, skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
        return _entry(module, model)(*args, **kwargs)


# --------------------------------------------------------------------------- GitHub


def _open(url: str | Request, repo: str) -> Any:
    """``urlopen``, a network failure raised as an error naming the repository."""
    try:
        return urlopen(url)
    except HTTPError:
        raise
    except URLError as e:
        where = url.full_url if isinstance(url, Request) else url
        raise RuntimeError(
            f"ember.hub: could not reach {where} for the repository {repo!r} ({e.reason}); "
            "check the network, or load a local copy with source='local'"
        ) from e


def _parse_repo_info(github: str) -> tuple[str, str, str]:
    repo_info, _, ref = github.partition(":")
    if repo_info.count("/") != 1:
        raise ValueError(
            f"ember.hub: expected a GitHub repository as 'owner/repo[:ref]', got {github!r} "
            "(for a directory pass source='local')"
        )
    owner, name = repo_info.split("/")
    if ref:
        return owner, name, ref
    try:  # the default branch: main if it exists, else master
        with urlopen(f"{GITHUB_URL}/{owner}/{name}/tree/main/"):
            return owner, name, "main"
    except HTTPError as e:
        if e.code == 404:
            return owner, name, "master"
        raise
    except URLError as e:  # offline: a cached copy of either
        for ref in ("main", "master"):
            if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{ref}")):
                return owner, name, ref
        raise RuntimeError(
            f"ember.hub: there seems to be no internet connection ({e.reason}) and the "
            f"repository {owner}/{name} is not in the cache ({get_dir()}); pass its ref "
            "('owner/repo:ref') or load a local copy with source='local'"
        ) from e


def _validate_not_a_forked_repo(owner: str, name: str, ref: str) -> None:
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for kind in ("branches", "tags"):
        page = 0
        while True:
            page += 1
            url = f"{GITHUB_API_URL}/repos/{owner}/{name}/{kind}?per_page=100&page={page}"
            try:
                with _open(Request(url, headers=headers), f"{owner}/{name}") as r:
                    found = json.loads(r.read().decode("utf-8"))
            except HTTPError:  # retry without a token that lacks the permission
                headers.pop("Authorization", None)
                with _open(Request(url, headers=headers), f"{owner}/{name}") as r:
                    found = json.loads(r.read().decode("utf-8"))
            if not found:
                break
            for entry in found:
                if entry["name"] == ref or entry["commit"]["sha"].startswith(ref):
                    return
    raise ValueError(
        f"Cannot find {ref} in https://github.com/{owner}/{name}. If it's a commit from a "
        "forked repo, please call hub.load() with forked repo directly."
    )


def _check_repo_is_trusted(
    owner: str, name: str, owner_name_ref: str, trust_repo: bool | str | None
) -> None:
    hub_dir = get_dir()
    listing = os.path.join(hub_dir, "trusted_list")
    Path(listing).touch()
    with open(listing) as f:
        trusted = tuple(line.strip() for line in f)
    downloaded = next(os.walk(hub_dir))[1]  # an earlier download counts as trusted
    owner_name = f"{owner}_{name}"
    is_trusted = (
        owner_name in trusted or owner_name_ref in downloaded or owner in _TRUSTED_REPO_OWNERS
    )
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories "
            "and as such cannot be downloaded. Do you trust this repository and wish to add "
            "it to the trusted list of repositories (y/N)?"
        )
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # (PyTorch's type)
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(listing, "a") as f:
            f.write(owner_name + "\n")


def _safe_extract_zip(archive: zipfile.ZipFile, into: str) -> None:
    """Extract ``archive`` into ``into``, refusing an entry that would land outside it."""
    root = Path(into).resolve(strict=False)
    for member in archive.infolist():
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or (len(name) >= 2 and name[1] == ":"):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(r"[/\\]", name):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (root / name).resolve(strict=False).is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        archive.extract(member, root)


def _get_cache_or_reload(
    github: str,
    force_reload: bool,
    trust_repo: bool | str | None,
    verbose: bool = True,
    skip_validation: bool = False,
) -> str:
    """The directory holding the repository's code: the cached copy, or a fresh download
    (NOTE [hub from GitHub])."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    normalized = ref.replace("/", "_")
    owner_name_ref = f"{owner}_{name}_{normalized}"
    repo_dir = os.path.join(hub_dir, owner_name_ref)
    _check_repo_is_trusted(owner, name, owner_name_ref, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(owner, name, ref)
    cached = os.path.join(hub_dir, normalized + ".zip")
    _remove(cached)
    url = f"{GITHUB_URL}/{owner}/{name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
    try:
        download_url_to_file(url, cached, progress=False)
    except HTTPError as e:
        if e.code != 300:
            raise RuntimeError(
                f"ember.hub: downloading {url} for {owner}/{name} failed: HTTP {e.code} {e.reason}"
            ) from e
        warnings.warn(
            f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in the repo? "
            "Torchhub will now assume that it's a branch. You can disambiguate tags and "
            "branches by explicitly passing refs/heads/branch_name or refs/tags/tag_name as "
            "the ref. That might require using skip_validation=True.",
            stacklevel=2,
        )
        download_url_to_file(
            f"{GITHUB_URL}/{owner}/{name}/zipball/refs/heads/{ref}", cached, progress=False
        )
    with zipfile.ZipFile(cached) as archive:
        top = archive.infolist()[0].filename.split("/")[0]  # GitHub's: owner-repo-sha/
        extracted = os.path.join(hub_dir, top)
        _remove(extracted)
        _safe_extract_zip(archive, hub_dir)
    _remove(cached)
    _remove(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


def _remove(path: str) -> None:
    if os.path.isfile(path):
        os.remove(path)
    elif os.path.exists(path):
        shutil.rmtree(path)


# --------------------------------------------------------------------------- downloads


class _Progress:
    """Bytes received so far, to stderr, while ``progress`` is on (PyTorch uses tqdm when
    it is installed; this is its plain fallback)."""

    def __init__(self, total: int | None, enabled: bool) -> None:
        self.total, self.enabled, self.done = total, enabled, 0

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        if self.total:
            sys.stderr.write(f"\r{100 * self.done / self.total:.1f}%")
        else:
            sys.stderr.write(f"\r{self.done} bytes")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def download_url_to_file(
    url: str, dst: str, hash_prefix: str | None = None, progress: bool = True
) -> None:
    """Save what ``url`` (``http(s)://``, ``file://``) holds at ``dst``; with ``hash_prefix``,
    its SHA256 must start with it. It is written to a temporary file beside ``dst`` and
    moved into place only once complete (and checked).

    >>> ember.hub.download_url_to_file("file:///tmp/a.pt", "/tmp/b.pt")  # doctest: +SKIP
    """
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        partial = f"{dst}.{uuid.uuid4().hex}.partial"
        try:
            f = open(partial, "w+b")  # noqa: SIM115  (closed in finally)
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    try:
        try:
            response = urlopen(Request(url, headers={"User-Agent": "ember.hub"}))
        except HTTPError:
            raise
        except URLError as e:
            raise RuntimeError(
                f"ember.hub: could not download {url} ({e.reason}); check the URL and the network"
            ) from e
        with response as u:
            length = u.info().get_all("Content-Length")
            bar = _Progress(int(length[0]) if length else None, progress)
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            while chunk := u.read(READ_DATA_CHUNK):
                f.write(chunk)
                if sha256 is not None:
                    sha256.update(chunk)
                bar.update(len(chunk))
            bar.close()
        f.close()
        if sha256 is not None and hash_prefix is not None:
            digest = sha256.hexdigest()
            if digest[: len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _is_legacy_zip_format(filename: str) -> bool:
    """A zip of one file (PyTorch's hub extracts such a manual archive before loading)."""
    if not zipfile.is_zipfile(filename):
        return False
    with zipfile.ZipFile(filename) as z:
        members = z.infolist()
    return len(members) == 1 and not members[0].is_dir()


def load_state_dict_from_url(
    url: str,
    model_dir: str | None = None,
    map_location: Any = None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool = False,
) -> dict[str, Any]:
    """The checkpoint at ``url``, downloaded once into ``model_dir`` (default
    ``get_dir()/checkpoints``) and read with ``ember.load``. ``check_hash``: the file name's
    ``-<sha256 prefix>.`` part (``resnet18-bfd8deac.pth``) must prefix the contents' SHA256.
    ``weights_only`` is accepted: ``ember.load`` never runs code from a file.

    >>> sd = ember.hub.load_state_dict_from_url("file:///tmp/w-1a2b.pt")  # doctest: +SKIP
    """
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn(
            "TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2
        )
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
        found = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached, found.group(1) if found else None, progress=progress)
    if _is_legacy_zip_format(cached):
        warnings.warn(
            "Falling back to the old format < 1.6. This support will be deprecated in favor "
            "of default zipfile format introduced in 1.6. Please redo torch.save() to save it "
            "in the new zipfile format.",
            FutureWarning,
            stacklevel=2,
        )
        with zipfile.ZipFile(cached) as z:
            _safe_extract_zip(z, model_dir)
            cached = os.path.join(model_dir, z.infolist()[0].filename)
    return ember.load(cached, map_location=map_location, weights_only=weights_only)  # type: ignore[no-any-return]
