"""The floor for one fresh container per candidate: docker create, start, wait and remove
of a trivial container (`true` in the sandbox image, no network), over and over, with the
same number of workers, through the engine's API calls and nothing else."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from selfcorrect_action.sandbox.config import LABEL, LABEL_EXPIRES, LABEL_SESSION

_EXPIRES_S = 600.0


def bare_loop(api: Any, image: str, *, count: int, workers: int, runtime: str,
              network_disabled: bool = False) -> float:
    """Seconds for `count` cycles. `api` is the docker SDK's low-level client
    (DockerEngine.client.api): the benchmark's only direct engine call, so that no layer of
    ours is in the floor it measures. `network_disabled`: as the sandbox's containers start
    (no libnetwork hook, about half of a trivial container's CPU): the floor on equal
    footing with ours, beside Docker's default one."""
    labels = {LABEL: "1", LABEL_SESSION: f"bare-{uuid.uuid4().hex[:8]}",
              LABEL_EXPIRES: str(int(time.time() + _EXPIRES_S))}
    host_config = api.create_host_config(network_mode="none", runtime=runtime)

    def cycle(_: int) -> None:
        container = api.create_container(image, ["true"], host_config=host_config,
                                         labels=labels, network_disabled=network_disabled)
        try:
            api.start(container["Id"])
            api.wait(container["Id"])
        finally:
            api.remove_container(container["Id"], force=True)

    cycle(-1)  # warm-up: the image's layers, the runtime's first start
    started = time.perf_counter()
    with ThreadPoolExecutor(max(1, workers)) as pool:
        list(pool.map(cycle, range(count)))
    return time.perf_counter() - started
