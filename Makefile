# mongo-fle-proxy: the two commands a newcomer runs are `make demo` and `make test`.
.PHONY: build test demo venv clean bench-crypto

JAR  := proxy/target/fle-proxy.jar
VENV := .venv
MVN  := mvn -B -ntp

## build: the fat jar proxy/target/fle-proxy.jar (proxy, embedded backend, benchmarks)
build: $(JAR)

$(JAR): proxy/pom.xml $(shell find proxy/src/main -type f 2>/dev/null)
	cd proxy && $(MVN) -q package -DskipTests

## venv: Python virtual environment: the KMS (PyKMIP, pinned) and the test clients (pymongo, pytest)
venv: $(VENV)/.installed

$(VENV)/.installed: proxy/tests/requirements.txt kms/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q -r kms/requirements.txt -r proxy/tests/requirements.txt
	touch $@

## test: every test: Java unit and integration tests (JUnit; the KMS ones start PyKMIP), then pytest
test: venv
	cd proxy && $(MVN) package
	$(VENV)/bin/python -m pytest -q proxy/tests
	$(VENV)/bin/python -m pytest -q kms/tests

## demo: the main job: KMS + embedded backend + proxy + benchmark, writing results/embedded/
demo: build venv
	deploy/demo.sh

## bench-crypto: JMH benchmark of every cipher suite next to `openssl speed`, writes results/crypto/ (~15 min)
bench-crypto:
	cd proxy && $(MVN) -q test-compile exec:exec@crypto-bench

clean:
	cd proxy && $(MVN) -q clean
	rm -rf $(VENV)
