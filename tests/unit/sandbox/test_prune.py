"""Which sandbox images `selfcorrect sandbox prune` removes: ours and stale only."""

from __future__ import annotations

from selfcorrect_action.sandbox.derived_image import BASE_LABEL
from selfcorrect_action.sandbox.engine_api import ImageInfo
from selfcorrect_action.sandbox.image import HASH_LABEL
from selfcorrect_action.sandbox.prune import plan, prune_images
from tests.fakes.fake_engine import FakeEngine

CURRENT = "selfcorrect-sandbox:1.0-aaaa"


def image(id_: str, *tags: str, base: str | None = None) -> ImageInfo:
    labels = {HASH_LABEL: id_, **({BASE_LABEL: base} if base else {})}
    return ImageInfo(f"sha256:{id_}", labels, tags)


def test_the_current_image_its_names_and_its_derived_images_stay() -> None:
    current = image("aaaa", CURRENT, "selfcorrect-sandbox:1.0")
    images = [
        current,
        image("bbbb", "selfcorrect-sandbox:1.0-bbbb"),
        image("cccc", "selfcorrect-sandbox-deps:1.0-cccc", base=CURRENT),
        image("dddd", "selfcorrect-sandbox-deps:1.0-dddd", base="selfcorrect-sandbox:1.0-bbbb"),
        image("eeee", "ghcr.io/acme/selfcorrect-sandbox:1.0"),
        image("ffff", "selfcorrect-sandbox-deps:1.0-ffff", base="sha256:aaaa"),
    ]

    decided = plan(images, current=current, current_tag=CURRENT)

    assert decided.remove == ["selfcorrect-sandbox-deps:1.0-dddd",
                              "selfcorrect-sandbox:1.0-bbbb"]
    kept = dict(decided.keep)
    assert kept[CURRENT] == kept["selfcorrect-sandbox:1.0"] == "the current sandbox image"
    assert kept["selfcorrect-sandbox-deps:1.0-cccc"] == "built on the current sandbox image"
    assert kept["selfcorrect-sandbox-deps:1.0-ffff"] == "built on the current sandbox image"
    assert kept["ghcr.io/acme/selfcorrect-sandbox:1.0"].startswith("not an image selfcorrect")


def test_without_a_current_image_every_one_of_ours_goes() -> None:
    decided = plan([image("bbbb", "selfcorrect-sandbox:1.0-bbbb")], current=None,
                   current_tag=CURRENT)
    assert decided.remove == ["selfcorrect-sandbox:1.0-bbbb"] and decided.keep == []


def test_a_dry_run_removes_nothing() -> None:
    engine = FakeEngine(images={CURRENT: {HASH_LABEL: "a"},
                                "selfcorrect-sandbox:1.0-bbbb": {HASH_LABEL: "b"}})
    pruned = prune_images(engine, current_tag=CURRENT, dry_run=True)
    assert pruned.plan.remove == ["selfcorrect-sandbox:1.0-bbbb"] and pruned.removed == []
    assert set(engine.images) == {CURRENT, "selfcorrect-sandbox:1.0-bbbb"}
    pruned = prune_images(engine, current_tag=CURRENT)
    assert pruned.removed == ["selfcorrect-sandbox:1.0-bbbb"] and set(engine.images) == {
        CURRENT}
