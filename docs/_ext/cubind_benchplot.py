# SPDX-License-Identifier: Apache-2.0
"""The benchmark page's plot, drawn from the committed raw results.

The run is the one BENCHMARKS.md's summary names (the first
``results/bench/h200-paired-*.md`` report after its "## Summary" heading);
its raw JSON lines (the same name, ``.jsonl.gz``) are read with
bench/paired.py's own loader and summary, so the bars are the medians of
that report's "Median ns per call" table, never numbers typed here. The
figure is written at the start of the build to docs/_generated/ (ignored by
git) for docs/benchmarks.md.
"""
import os
import re
import sys

IMPLS = ["c", "cubind.driver", "cubind.cu", "cuda.bindings", "cuda.core"]
COLOURS = {"c": "#777777", "cubind.driver": "#1b7837", "cubind.cu": "#7fbf7b",
           "cuda.bindings": "#762a83", "cuda.core": "#af8dc3"}
FIGURE = os.path.join("_generated", "benchmarks.png")


def summary_run(benchmarks_md):
    """The raw results of the run BENCHMARKS.md's summary is taken from."""
    with open(benchmarks_md, encoding="utf-8") as f:
        text = f.read()
    summary = text.find("\n## Summary")
    m = re.compile(r"results/bench/(h200-paired-[\w-]+)\.md").search(text, max(summary, 0))
    if summary < 0 or not m:
        raise RuntimeError("%s: no '## Summary' section naming a results/bench/h200-paired-*.md run"
                           % benchmarks_md)
    return os.path.join(os.path.dirname(benchmarks_md), "results", "bench", m.group(1) + ".jsonl.gz")


def medians(root, path):
    """{case: {impl: median ns}} of a paired run, by bench/paired.py."""
    sys.path.insert(0, os.path.join(root, "bench"))
    try:
        import paired
    finally:
        sys.path.pop(0)
    records = paired.load_runs([path])
    procs = paired.per_process(records)
    out = {}
    for case in paired.record_cases(records):
        for impl in IMPLS:
            s = paired.summarise([t.get((case, impl)) for t in procs.values()])
            if s:
                out.setdefault(case, {})[impl] = s[0]
    return out, paired.bench.CALL_CASES, paired.bench.LAUNCH_CASES


def draw(data, call_cases, launch_cases, title, out):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    panels = [("Driver calls: ns per call (median)", [c for c in call_cases if c in data]),
              ("Kernel launches: ns per launch (median)", [c for c in launch_cases if c in data])]
    fig, axes = plt.subplots(1, 2, figsize=(13, 6.5))
    height = 0.8 / len(IMPLS)
    for ax, (label, cases) in zip(axes, panels):
        for k, impl in enumerate(IMPLS):
            ys = [i + (k - (len(IMPLS) - 1) / 2) * height for i in range(len(cases))]
            xs = [data[c].get(impl, 0) for c in cases]
            ax.barh(ys, xs, height, label=impl, color=COLOURS[impl])
        ax.set_yticks(range(len(cases)), cases)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("ns (log scale); a missing bar: not measured")
        ax.set_title(label)
        ax.grid(axis="x", which="both", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(IMPLS))
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    # no date in the file: the same data draws the same bytes
    fig.savefig(out, dpi=90, metadata={"Software": None})
    plt.close(fig)


def write_figure(app):
    root = os.path.dirname(app.srcdir)
    run = summary_run(os.path.join(root, "BENCHMARKS.md"))
    data, calls, launches = medians(root, run)
    draw(data, calls, launches, "%s (lower is better)" % os.path.relpath(run, root),
         os.path.join(app.srcdir, FIGURE))


def setup(app):
    app.connect("builder-inited", write_figure)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
