"""The deployment: Compose stacks, Dockerfiles, the demo's scripts and the benchmark lab
(deploy.bench). A package so that the lab's modules import each other by name: run them from the
repository's root as `python -m deploy.bench.matrix ...` (deploy/tests is a plain test directory)."""
