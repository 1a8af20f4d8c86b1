# mongo-fle-proxy: the two commands a newcomer runs are `make demo` and `make test`.
.PHONY: build test demo venv clean bench-crypto bench-overhead

JAR  := proxy/target/fle-proxy.jar
YCSB := ycsb-workloads/binding/target/fle-ycsb.jar
VENV := .venv
MVN  := mvn -B -ntp

## build: the fat jars proxy/target/fle-proxy.jar (proxy, embedded backend, benchmarks) and
## ycsb-workloads/binding/target/fle-ycsb.jar (YCSB core + our MongoDB binding)
build: $(JAR) $(YCSB)

$(JAR): proxy/pom.xml $(shell find proxy/src/main -type f 2>/dev/null)
	cd proxy && $(MVN) -q package -DskipTests

$(YCSB): ycsb-workloads/binding/pom.xml $(shell find ycsb-workloads/binding/src -type f 2>/dev/null)
	cd ycsb-workloads/binding && $(MVN) -q package

## venv: Python virtual environment: the KMS (PyKMIP, pinned) and the test clients (pymongo, pytest)
venv: $(VENV)/.installed

$(VENV)/.installed: proxy/tests/requirements.txt kms/requirements.txt deploy/bench/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q -r kms/requirements.txt -r proxy/tests/requirements.txt -r deploy/bench/requirements.txt
	touch $@

## test: every test: Java unit and integration tests (JUnit; the KMS ones start PyKMIP), then pytest
test: venv
	cd proxy && $(MVN) package
	cd ycsb-workloads/binding && $(MVN) -q package
	$(VENV)/bin/python -m pytest -q proxy/tests
	$(VENV)/bin/python -m pytest -q kms/tests
	$(VENV)/bin/python -m pytest -q deploy/bench

## demo: the main job: KMS + embedded backend + proxy + scaled-down YCSB matrix, writing results/embedded/
demo: build venv
	deploy/demo.sh

## bench-overhead: per-suite overhead (Java driver, inserts and reads by _id), results/embedded/overhead.md
bench-overhead: build venv
	DEMO_JOB=overhead deploy/demo.sh

## bench-crypto: JMH benchmark of every cipher suite next to `openssl speed`, writes results/crypto/ (~15 min)
bench-crypto:
	cd proxy && $(MVN) -q test-compile exec:exec@crypto-bench

clean:
	cd proxy && $(MVN) -q clean
	rm -rf $(VENV)
