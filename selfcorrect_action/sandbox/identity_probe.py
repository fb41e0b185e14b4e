"""What an image has installed, listed from inside it: one line per Debian package
(`deb:<name>=<version>`) and per Python distribution (`py:<name>==<version>`), sorted and
deduplicated, written to LISTING_FILE in the work dir (identity.py reads it back as an
artifact and digests it; issue 36).

Standard library only: the sandbox's python3 runs this file as a script; the host imports
it for its pure parts (the parsing, tested without Docker). A file, not stdout: the listing
of a derived image with many requirements could pass the runner's stdout cap, and an
artifact's cap is megabytes.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Iterable
from pathlib import Path

DPKG_STATUS = "/var/lib/dpkg/status"
LISTING_FILE = "packages.txt"
# A field that starts a line of a dpkg stanza; continuation lines start with a space.
_FIELD = re.compile(r"^([A-Za-z0-9][A-Za-z0-9-]*):[ \t]*(.*)$", re.MULTILINE)
_STANZA_BREAK = re.compile(r"\n[ \t]*\n")
# PEP 503's normalisation: `PyYAML` and `pyyaml`, `ruamel.yaml` and `ruamel-yaml` are one name.
_NAME_SEPARATORS = re.compile(r"[-_.]+")


def dpkg_lines(status: str) -> list[str]:
    """`deb:<name>=<version>` for each package dpkg's status file says is installed: the
    last word of Status is the state, so `install ok installed` and `hold ok installed`
    count, `deinstall ok config-files` (removed, its config left) does not."""
    lines = []
    for stanza in _STANZA_BREAK.split(status):
        fields = dict(_FIELD.findall(stanza))
        state = fields.get("Status", "").split()[-1:]
        if state == ["installed"] and fields.get("Package") and fields.get("Version"):
            lines.append(f"deb:{fields['Package']}={fields['Version']}")
    return lines


def python_line(name: str | None, version: str | None) -> str | None:
    """`py:<normalised name>==<version>`; None for a dist-info folder without a name or a
    version in its metadata (a broken install: nothing to name)."""
    if not name or not version:
        return None
    return f"py:{_NAME_SEPARATORS.sub('-', name).lower()}=={version}"


def python_lines(distributions: Iterable[importlib.metadata.Distribution]) -> list[str]:
    found = (python_line(dist.metadata["Name"], dist.version) for dist in distributions)
    return [line for line in found if line is not None]


def listing(lines: Iterable[str]) -> list[str]:
    """The canonical form: stripped, without blanks, deduplicated, sorted."""
    return sorted({line.strip() for line in lines if line.strip()})


def main() -> None:
    status = Path(DPKG_STATUS)
    deb = dpkg_lines(status.read_text(encoding="utf-8")) if status.is_file() else []
    lines = listing([*deb, *python_lines(importlib.metadata.distributions())])
    Path(LISTING_FILE).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    print(len(lines))


if __name__ == "__main__":
    main()
