"""axe-core, the accessibility engine, from the npm registry at test time: `npm pack` of the
pinned version into .cache/ (ignored by git), checked against the registry's published
integrity, unpacked once. Nothing of it is committed."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from selfcorrect_action.fileio import write_atomically

VERSION = "4.14.1"
# `npm view axe-core@4.14.1 dist.integrity`
INTEGRITY = ("sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJp"
             "Ze37OgudVGtQ==")
CACHE = Path(__file__).resolve().parents[2] / ".cache" / "axe-core" / VERSION / "axe.min.js"


class AxeUnavailable(Exception):
    pass


def axe_source() -> str:
    if not CACHE.is_file():
        write_atomically(CACHE, _fetched())
    return CACHE.read_text(encoding="utf-8")


def _fetched() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise AxeUnavailable("npm is not installed: axe-core comes from the npm registry "
                             "(apt-get install npm)")
    with tempfile.TemporaryDirectory(prefix="selfcorrect-axe-") as folder:
        # npm's own cache in the scratch folder too: tests never write to the real home.
        env = {**os.environ, "npm_config_cache": str(Path(folder) / "npm-cache")}
        done = subprocess.run([npm, "pack", f"axe-core@{VERSION}", "--pack-destination",
                               folder, "--silent"], capture_output=True, text=True,
                              timeout=300, check=False, env=env)
        packed = Path(folder) / f"axe-core-{VERSION}.tgz"
        if done.returncode != 0 or not packed.is_file():
            raise AxeUnavailable(f"npm pack axe-core@{VERSION} failed: "
                                 f"{(done.stderr or done.stdout).strip()[-500:]}")
        digest = base64.b64encode(hashlib.sha512(packed.read_bytes()).digest()).decode()
        if f"sha512-{digest}" != INTEGRITY:
            raise AxeUnavailable(f"axe-core-{VERSION}.tgz does not match its published "
                                 f"integrity (got sha512-{digest})")
        with tarfile.open(packed) as archive:
            member = archive.extractfile("package/axe.min.js")
            if member is None:
                raise AxeUnavailable(f"axe-core-{VERSION}.tgz holds no package/axe.min.js")
            return member.read().decode("utf-8")
