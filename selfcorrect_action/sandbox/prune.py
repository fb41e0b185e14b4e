"""`selfcorrect sandbox prune`: the sandbox images this machine built and no longer uses.

Every change to sandbox/ builds a new content-hashed image (image.py `image_tag`), and every
repair requirements file a derived one (derived_image.py), each some hundreds of megabytes;
none is ever replaced in place, so they pile up. What goes: an image of our own local
repositories (never a pulled prebuilt one, never anything else) that is not the current
sandbox image nor one of its names, and a derived image whose base is not the current
image. What stays anyway: an image a container still uses (the engine refuses, and it is
reported as kept). Another checkout on the same machine with another sandbox/ simply
builds its image again on its next run.

The decision is pure (`plan`); the engine calls are the thin part at the bottom.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from selfcorrect_action.sandbox.derived_image import BASE_LABEL, DERIVED_REPOSITORY
from selfcorrect_action.sandbox.engine_api import Engine, ImageInfo
from selfcorrect_action.sandbox.image import HASH_LABEL, IMAGE_REPOSITORY

OWN_REPOSITORIES = (IMAGE_REPOSITORY, DERIVED_REPOSITORY)


@dataclass(frozen=True)
class PrunePlan:
    remove: list[str] = field(default_factory=list)  # repository:tag names, in order
    keep: list[tuple[str, str]] = field(default_factory=list)  # (name, why)


def plan(images: Sequence[ImageInfo], *, current: ImageInfo | None, current_tag: str,
         repositories: Sequence[str] = OWN_REPOSITORIES) -> PrunePlan:
    """Which names of our images to remove, and why each other one stays."""
    current_id = current.id if current else None
    # What a derived image's base label may name the current image by.
    current_names = {current_tag, *(current.tags if current else ()),
                     *([current_id] if current_id else [])}
    remove: list[str] = []
    keep: list[tuple[str, str]] = []
    for image in sorted(images, key=lambda i: i.tags):
        for name in sorted(image.tags):
            repository = name.rsplit(":", 1)[0]
            if repository not in repositories:
                keep.append((name, "not an image selfcorrect builds here (pulled or renamed)"))
            elif image.id == current_id:
                keep.append((name, "the current sandbox image"))
            elif image.labels.get(BASE_LABEL, "") in current_names:
                keep.append((name, "built on the current sandbox image"))
            else:
                remove.append(name)
    return PrunePlan(remove, keep)


@dataclass(frozen=True)
class Pruned:
    plan: PrunePlan
    removed: list[str] = field(default_factory=list)
    in_use: list[str] = field(default_factory=list)  # planned, but a container still uses it


def prune_images(engine: Engine, *, current_tag: str, dry_run: bool = False,
                 repositories: Sequence[str] = OWN_REPOSITORIES) -> Pruned:
    decided = plan(engine.images_labelled(HASH_LABEL), current=engine.image(current_tag),
                   current_tag=current_tag, repositories=repositories)
    if dry_run:
        return Pruned(decided)
    removed: list[str] = []
    in_use: list[str] = []
    for name in decided.remove:
        engine.remove_image(name)
        (in_use if engine.image(name) is not None else removed).append(name)
    return Pruned(decided, removed, in_use)
