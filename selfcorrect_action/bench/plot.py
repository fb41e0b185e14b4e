"""The PNG beside each table (matplotlib, Agg: no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selfcorrect_action.bench.summary import ModelRun, Mutation, SideBySide


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_side_by_side(rows: list[SideBySide], path: Path) -> None:
    """One bar per run of ours (one per start when an invocation scored several), then the
    reference harness and the bare loop, measured once beside them."""
    plt = _pyplot()
    s = rows[0]
    bars = [(f"selfcorrect ({row.isolation}{', ' + row.start if len(rows) > 1 else ''})",
             row.ours_wall_s, "#3b6ea8") for row in rows]
    bars.append(("reference harness", s.reference_wall_s, "#999999"))
    if s.mode == "canonical":
        bars.append(("bare container loop", s.bare_wall_s, "#c98a3b"))
    shown = [(name, value, colour) for name, value, colour in bars if value is not None]
    figure, axis = plt.subplots(figsize=(7, 2.4 + 0.4 * len(shown)))
    axis.barh([n for n, _, _ in shown], [v for _, v, _ in shown],
              color=[c for _, _, c in shown])
    for index, (_, value, _) in enumerate(shown):
        axis.text(value, index, f" {value:.2f} s", va="center")
    axis.set_xlabel(f"wall time for {s.total} {'problems' if s.mode == 'canonical' else 'samples'}"
                    f" ({s.workers} workers, {s.runtime}), seconds")
    axis.set_title(f"HumanEval {s.mode}: {s.ours_passed}/{s.total} passed, agreement "
                   f"{s.agreement if s.agreement is not None else 'n/a'}/{s.total}")
    axis.invert_yaxis()
    _save(plt, figure, path)


def plot_mutants(m: Mutation, path: Path) -> None:
    plt = _pyplot()
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    names = [row.kind.replace("_", "\n") for row in m.kinds]
    left.bar(names, [row.caught for row in m.kinds], label="caught", color="#3b6ea8")
    left.bar(names, [row.missed for row in m.kinds], bottom=[row.caught for row in m.kinds],
             label="missed", color="#c94a3b")
    left.set_title("behaviour-changing mutants")
    left.legend()
    categories = sorted(m.categories.items())
    right.bar([c for c, _ in categories], [n for _, n in categories], color="#777777")
    right.set_title("caught mutants by failure category")
    _save(plt, figure, path)


def plot_model(r: ModelRun, path: Path) -> None:
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6, 3.2))
    values = [r.oneshot_pass or 0.0, r.loop_pass or 0.0]
    axis.bar(["one-shot", "the loop"], values, color=["#999999", "#3b6ea8"])
    for index, value in enumerate(values):
        axis.text(index, value, f"{value:.1f}%", ha="center", va="bottom")
    axis.set_ylim(0, 105)
    axis.set_ylabel("pass@1, %")
    axis.set_title(f"{r.model}: {r.done} problems")
    _save(plt, figure, path)


def _save(plt: Any, figure: Any, path: Path) -> None:
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
