"""The release workflow's own steps (.github/workflows/release.yml), as tested Python:

  check-version VERSION    the version asked for is the package's, and a release version
  names --owner OWNER      the two GHCR repositories (docker wants them lower-case)
  labels action|sandbox    the labels an image is built with, one `key=value` a line
  action-yml ...           action.yml rewritten to name the images just pushed, by digest

Each prints what the workflow writes to $GITHUB_OUTPUT. `labels` needs nothing beyond the
standard library (the workflow runs it before installing anything); `action-yml` needs
ruamel.yaml, whose round trip keeps action.yml's comments and folded descriptions.

    python3 scripts/release.py action-yml --action-image ghcr.io/o/selfcorrect-action@sha256:… \\
        --sandbox-image ghcr.io/o/selfcorrect-sandbox@sha256:… [--file action.yml]
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from selfcorrect_action import __version__  # noqa: E402
from selfcorrect_action.sandbox.image import context_labels  # noqa: E402

ACTION_REPOSITORY = "selfcorrect-action"
SANDBOX_REPOSITORY = "selfcorrect-sandbox"
# A release version: what pyproject.toml says, PEP 440's final or pre-release form, which is
# also a valid image tag and git tag once prefixed with "v".
_VERSION = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(?:(?:a|b|rc)[0-9]+)?")
# What action.yml may name: an image pinned by digest. A tag can be moved; a digest cannot.
_PINNED = re.compile(r"[a-z0-9][a-z0-9._/:-]*@sha256:[0-9a-f]{64}")
_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?")


class ReleaseError(Exception):
    """A release step that must not go on; the message says what and how to fix it."""


def check_version(asked: str, *, root: Path = ROOT, package: str = __version__) -> str:
    """The git tag to make, once `asked` is a release version that pyproject.toml and the
    package both carry (a release of one version must not ship code that says another)."""
    if not _VERSION.fullmatch(asked):
        raise ReleaseError(f"version {asked!r} is not a release version: expected X.Y.Z or "
                           "X.Y.ZrcN, without a leading v")
    declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    if asked != declared or asked != package:
        raise ReleaseError(
            f"version {asked} is not the one this commit carries (pyproject.toml: {declared}, "
            f"selfcorrect_action/__init__.py: {package}); bump both and release from that "
            "commit")
    return f"v{asked}"


def image_names(owner: str, *, registry: str = "ghcr.io") -> dict[str, str]:
    if not _OWNER.fullmatch(owner):
        raise ReleaseError(f"{owner!r} is not a GitHub account name")
    base = f"{registry}/{owner.lower()}"
    return {"action": f"{base}/{ACTION_REPOSITORY}", "sandbox": f"{base}/{SANDBOX_REPOSITORY}"}


def image_labels(image: str, *, version: str, source: str, revision: str,
                 root: Path = ROOT) -> dict[str, str]:
    """OCI labels for both images (GHCR links a package to its repository by `source`); the
    sandbox image also gets what every selfcorrect build writes on it (image.build_labels:
    its context's hash, the version and the runner's protocol, read from sandbox/runner.py),
    so a release's image is checked exactly as a locally built one."""
    labels = {
        "org.opencontainers.image.version": version,
        "org.opencontainers.image.revision": revision,
        "org.opencontainers.image.source": source,
    }
    if image == "sandbox":
        labels |= context_labels(root / "sandbox", version=version)
    elif image != "action":
        raise ReleaseError(f"no image {image!r}: expected action or sandbox")
    return labels


def pinned(reference: str, what: str) -> str:
    if not _PINNED.fullmatch(reference):
        raise ReleaseError(f"{what} {reference!r} is not an image named by digest "
                           "(registry/name@sha256:<64 hex digits>)")
    return reference


def rewrite_action_yml(text: str, *, action_image: str, sandbox_image: str,
                       revision: str = "") -> str:
    """action.yml for a release: the runner pulls the action image by digest instead of
    building the Dockerfile, and `sandbox-image` defaults to the sandbox image by digest.
    Everything else, comments included, stays as it was."""
    from ruamel.yaml import YAML  # the only step that needs it
    from ruamel.yaml.comments import CommentedMap

    yaml = _round_trip(YAML)
    data = yaml.load(text)
    runs, inputs = data.get("runs"), data.get("inputs")
    if not isinstance(runs, CommentedMap) or runs.get("using") != "docker":
        raise ReleaseError("action.yml: `runs` is not a Docker container action "
                           "(`using: docker`)")
    if not isinstance(inputs, dict) or not isinstance(inputs.get("sandbox-image"), dict):
        raise ReleaseError("action.yml: there is no `sandbox-image` input to default")
    runs["image"] = f"docker://{pinned(action_image, '--action-image')}"
    built = f" at {revision}" if revision else ""
    runs.yaml_add_eol_comment(f"# built{built} by .github/workflows/release.yml", "image")
    inputs["sandbox-image"]["default"] = pinned(sandbox_image, "--sandbox-image")
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _round_trip(yaml_class: Any) -> Any:
    yaml = yaml_class()  # round-trip mode: comments, key order and block scalars kept
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a line the file already has
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("check-version").add_argument("version")
    verbs.add_parser("names").add_argument("--owner", required=True)
    labels = verbs.add_parser("labels")
    labels.add_argument("image", choices=["action", "sandbox"])
    for name in ("--version", "--source", "--revision"):
        labels.add_argument(name, required=True)
    rewrite = verbs.add_parser("action-yml")
    rewrite.add_argument("--action-image", required=True)
    rewrite.add_argument("--sandbox-image", required=True)
    rewrite.add_argument("--revision", default="")
    rewrite.add_argument("--file", type=Path, default=ROOT / "action.yml")
    args = parser.parse_args(argv)
    try:
        for line in _run(args):
            print(line)
    except ReleaseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _run(args: argparse.Namespace) -> list[str]:
    if args.verb == "check-version":
        return [f"tag={check_version(args.version)}"]
    if args.verb == "names":
        return [f"{key}={value}" for key, value in image_names(args.owner).items()]
    if args.verb == "labels":
        found = image_labels(args.image, version=args.version, source=args.source,
                             revision=args.revision)
        return [f"{key}={value}" for key, value in found.items()]
    path: Path = args.file
    path.write_text(rewrite_action_yml(path.read_text(), action_image=args.action_image,
                                       sandbox_image=args.sandbox_image,
                                       revision=args.revision))
    return [f"action-yml={path}"]


if __name__ == "__main__":
    sys.exit(main())
