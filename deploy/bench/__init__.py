"""The benchmark lab: the YCSB matrix runner (matrix), its ledger and report (ledger, report, plots,
stats, names, markdown), and the other benchmarks' report writers (metrics_cost, rewrap_bench,
compare). Its command lines run from the repository's root as modules, e.g.

    .venv/bin/python -m deploy.bench.matrix --help
    .venv/bin/python -m deploy.bench.report results/embedded
"""
