# The benchmark runner: YCSB with our binding (`make ycsb-jar`, as CI builds it), the workload
# files, and the matrix runner with its report (`make venv` limited to the lab's requirements), run
# from /fle as the package deploy.bench (python -m deploy.bench.matrix).
FROM maven:3.9.9-eclipse-temurin-17 AS build
RUN apt-get update && apt-get install -y --no-install-recommends make && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY ycsb-workloads/binding ycsb-workloads/binding
RUN make ycsb-jar

FROM python:3.11.13-slim-bookworm
# openjdk's postinst needs the man directories that slim images leave out.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update && apt-get install -y --no-install-recommends make openjdk-17-jre-headless \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /fle
COPY Makefile ./
COPY deploy/bench/requirements.txt deploy/bench/requirements.txt
RUN make venv VENV=/opt/venv PY_REQUIREMENTS=deploy/bench/requirements.txt
COPY deploy/__init__.py deploy/__init__.py
COPY deploy/bench/ deploy/bench/
COPY ycsb-workloads/workloads/ ycsb-workloads/workloads/
COPY --from=build /src/ycsb-workloads/binding/target/fle-ycsb.jar ycsb-workloads/binding/target/fle-ycsb.jar
COPY deploy/docker/bench-entrypoint.sh /usr/local/bin/bench
# The runner may run as the host user (so results/ stays theirs): matplotlib's cache goes to /tmp.
ENV MPLCONFIGDIR=/tmp/matplotlib
ENTRYPOINT ["bench"]
CMD ["--help"]
