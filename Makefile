# mongo-fle-proxy: the two commands a newcomer runs are `make demo` and `make test`.
# The Dockerfiles in deploy/docker/ build with these same targets (proxy-jar, ycsb-jar, venv).
.PHONY: build proxy-jar ycsb-jar bench-jar test test-timing-stress test-differential test-crud-spec bench-evaluated bench-starvation bench-search bench-scale bench-paper-cell demo venv clean bench-crypto bench-overhead bench-metrics bench-audit bench-rewrap test-rewrap-20k mongosh fuzz

JAR  := proxy/target/fle-proxy.jar
YCSB := ycsb-workloads/binding/target/fle-ycsb.jar
BENCH := proxy/bench/target/fle-bench.jar
VENV := .venv
MVN  := mvn -B -ntp
# The interpreter the virtual environment is made from (.ci/run picks one that works).
BASE_PYTHON ?= python3
# What `make venv` installs; the Docker images install only their part (PY_REQUIREMENTS=…).
PY_REQUIREMENTS := kms/requirements.txt proxy/tests/requirements.txt deploy/bench/requirements.txt \
                   deploy/tests/requirements.txt docs/requirements.txt

## build: the fat jars proxy/target/fle-proxy.jar (proxy, embedded backend) and
## ycsb-workloads/binding/target/fle-ycsb.jar (YCSB core + our MongoDB binding)
build: proxy-jar ycsb-jar
proxy-jar: $(JAR)
ycsb-jar: $(YCSB)

$(JAR): proxy/pom.xml $(shell find proxy/src/main -type f 2>/dev/null)
	cd proxy && $(MVN) -q package -DskipTests

$(YCSB): ycsb-workloads/binding/pom.xml $(shell find ycsb-workloads/binding/src -type f 2>/dev/null)
	cd ycsb-workloads/binding && $(MVN) -q package

## bench-jar: proxy/bench/target/fle-bench.jar, the benchmark tools apart from the proxy's jar
## (`overhead`, and `relay`, the byte relay the proxy is compared with); its own unit tests run
bench-jar: $(BENCH)

$(BENCH): proxy/bench/pom.xml $(shell find proxy/bench/src -type f 2>/dev/null)
	cd proxy/bench && $(MVN) -q package

## venv: Python virtual environment: the KMS (PyKMIP, pinned), the test clients (pymongo, pytest),
## the benchmark lab (matplotlib), the Compose tests (PyYAML) and the documentation site (MkDocs)
venv: $(VENV)/.installed

$(VENV)/.installed: $(PY_REQUIREMENTS)
	$(BASE_PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q $(addprefix -r ,$(PY_REQUIREMENTS))
	touch $@

## mongosh: the MongoDB shell (npm, pinned) in .tools/, for the TLS test that connects with it
MONGOSH := .tools/node_modules/.bin/mongosh
MONGOSH_VERSION := 2.12.0
mongosh: $(MONGOSH)

$(MONGOSH):
	npm install --prefix .tools --no-audit --no-fund --loglevel=error mongosh@$(MONGOSH_VERSION)

## test: every test: Java unit and integration tests (JUnit; the KMS ones start PyKMIP), pytest
## (proxy, KMS, benchmark lab, Compose stacks; proxy/tests also smoke-tests fle-bench.jar), node
## (the cluster init script, also run by mongosh against a stand-in member), then the documentation
## site (docs/, mkdocs build --strict: a broken link or anchor fails). Every suite runs even when an
## earlier one fails; each test skipped (a part missing here) is named with its reason; the last
## line sums them up, and the status is non-zero if any failed.
test: build bench-jar venv mongosh
	@deploy/run-suites.sh "make test" \
	  "mvn test proxy"      "cd proxy && $(MVN) test" \
	  "pytest proxy/tests"  "$(VENV)/bin/python -m pytest -q --junitxml=build/test-reports/proxy.xml proxy/tests" \
	  "pytest kms/tests"    "$(VENV)/bin/python -m pytest -q --junitxml=build/test-reports/kms.xml kms/tests" \
	  "pytest deploy"       "$(VENV)/bin/python -m pytest -q --junitxml=build/test-reports/deploy.xml deploy/bench deploy/tests" \
	  "node deploy/tests"   "node --test --test-reporter=tap deploy/tests/" \
	  "mkdocs docs"         "NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir build/site"

## test-timing-stress: the tests that wait on time, STRESS_ROUNDS times in a row (default 20) while
## stress-ng (or one busy loop per core) keeps every core busy; stops at the first failure with its
## output (deploy/stress-timing.sh). A round takes 7-12 min on the 2-core machine.
STRESS_ROUNDS ?= 20
TIMING_JUNIT := BoundsTest,ClientBoundsTest,OverLimitRefusalTest,UpstreamNotReadyTest,UpstreamLogLinesTest,BadInputLogTest,ExhaustBackpressureTest,HandshakeRewritingTest,JavaDriverThroughProxyTest,WaitingForKeysTest,KeyResolverCacheTest,KeyResolverKmsTest,KmipTlsTest,ReloadBeforeKeyCheckTest,PolicyHolderTest,AdminServerTest,AdminHttpTest,DataPathCollectorTest,CheckCommandTest,UpstreamCheckTest
test-timing-stress: build ycsb-jar bench-jar venv mongosh
	deploy/stress-timing.sh -n $(STRESS_ROUNDS) \
	  "cd proxy && $(MVN) -q test -Dtest=$(TIMING_JUNIT)" \
	  "$(VENV)/bin/python -m pytest -q -x proxy/tests/test_metrics.py proxy/tests/test_kms_outage.py \
	     proxy/tests/test_bounds.py proxy/tests/test_reload_protects_at_once.py proxy/tests/test_upstream_failures.py \
	     proxy/tests/test_check.py proxy/tests/test_upstream_failover.py" \
	  "$(VENV)/bin/python -m pytest -q -x proxy/tests/test_tls.py -k reload" \
	  "$(VENV)/bin/python -m pytest -q -x proxy/tests/test_rewrap.py -k 'killed_midway or kms_outage_mid_run or live_3des'" \
	  "$(VENV)/bin/python -m pytest -q -x proxy/tests/test_bench_jar.py -k overhead" \
	  "$(VENV)/bin/python -m pytest -q -x proxy/tests/test_retried_writes.py" \
	  "$(VENV)/bin/python -m pytest -q -x proxy/tests/test_ycsb.py \
	     -k 'resumes_after_a_kill or refuses_bad_input or dies_mid_matrix or sliced'" \
	  "$(VENV)/bin/python -m pytest -q -x kms/tests -k serve_stops" \
	  "node --test deploy/tests/init-cluster-standin.test.js"

## test-rewrap-20k: the rewrap integration test at the issue's size: 20,000 documents moved from
## 3DES to AES with --parallel 4 under eight pymongo threads (`make test` runs it at 3,000; minutes on the embedded backend)
test-rewrap-20k: build venv
	FLE_REWRAP_DOCS=20000 $(VENV)/bin/python -m pytest -q proxy/tests/test_rewrap.py -k live_3des

## test-crud-spec: the MongoDB drivers' unified CRUD spec tests (pymongo's runner and test/crud/unified,
## from its sdist, cached in build/crud-spec/) against the embedded backend directly, then through the
## proxy with field x encrypted, randomized and deterministic, on every collection they use:
## results/crud-spec/summary.md (counts per mode; each test passing directly that fails through the
## proxy, with its reason). 4-5 min, so not in `make test`
test-crud-spec: proxy-jar venv
	$(VENV)/bin/python deploy/spec/crud_spec.py

## demo: the main job: KMS + embedded backend + proxy + scaled-down YCSB matrix, writing results/embedded/
## test-differential: the differential query test with 10,000 generated queries (make test runs 300)
test-differential: build venv
	FLE_DIFF_EXAMPLES=10000 $(VENV)/bin/python -m pytest -q -x proxy/tests/test_differential_queries.py

## bench-evaluated: proxy CPU per candidate of queries the proxy evaluates, 100/1,000/10,000 candidates (~1 min;
## make bench-overhead appends the same section to its report)
bench-evaluated: build venv
	$(VENV)/bin/python -m pytest -q -s proxy/tests/bench_evaluated_cost.py

## bench-starvation: 30 clients running evaluated queries of 10,000 candidates against a probe by _id on a
## plain collection, through the proxy and straight to the backend in the same window, three windows of 60 s; /healthz, RSS (~5 min;
## results/starvation/report.md)
bench-starvation: build venv
	$(VENV)/bin/python -m pytest -q -s proxy/tests/bench_starvation.py

## bench-scale: proxy CPU per unit as one dimension grows (listed paths, message size, batch, connections, policy size, cursors),
## rewrap size and memory after a burst (message sizes beside a byte relay, the floor), each with its
## verdict: results/embedded/scale.md (~20 min; SCALE_ROUNDS=N, SCALE_ONLY=paths,sizes,batches,burst,rewrap,held)
## bench-search: a range, a top 10, a prefix, a suffix and a substring search on encrypted fields with and without their indexes, over
## FLE_SEARCH_DOCS documents (default 1,000,000): answer time, candidates, proxy CPU, tags' storage:
## results/embedded/search.md (~7 min)
bench-search: build venv
	$(VENV)/bin/python -m pytest -q -s proxy/tests/bench_search.py

bench-scale: build bench-jar venv
	$(VENV)/bin/python -m pytest -q -s proxy/tests/bench_scale.py

demo: build venv
	deploy/demo.sh

## bench-paper-cell: one cell of the paper's matrix at its size: YCSB workload A on 1,000,000 records,
## plain / AES / 3DES through the proxy, the embedded backend holding all three in memory (-Xmx14g),
## two repeats: results/embedded/paper-cell/ (~15 min; DEMO_RECORDS, DEMO_REPEATS, DEMO_CELL_SECONDS)
bench-paper-cell: build venv
	DEMO_JOB=paper-cell deploy/demo.sh

## bench-overhead: CPU and allocation per operation of relays, proxies and each suite (Java driver,
## inserts and reads by _id), judged against the targets: results/embedded/overhead.md (~10 min)
bench-overhead: build bench-jar venv
	DEMO_JOB=overhead deploy/demo.sh

## bench-metrics: the cost of the admin listener and its metrics (rule 5 of the overhead benchmark):
## 6 pairs of fresh proxies on epoll, one without `admin:` and its twin with it (scraped every 5 s;
## start order and collections alternate between pairs), each pair warmed side by side for 90 s and
## then loaded side by side for 4 rounds, judged together by deploy/bench/metrics_cost.py:
## results/embedded/metrics-overhead/metrics-cost.md (~17 min; DEMO_METRICS_PAIRS=N;
## DEMO_METRICS_CONTROL=1: the A/A run; DEMO_METRICS_SCRAPE_SECONDS=0: never scraped)
bench-metrics: build bench-jar venv
	DEMO_JOB=overhead-metrics DEMO_ROUNDS=$${DEMO_ROUNDS:-0} DEMO_SIDE_BY_SIDE_ROUNDS=$${DEMO_SIDE_BY_SIDE_ROUNDS:-4} \
	  DEMO_SECONDS=$${DEMO_SECONDS:-4} DEMO_WARMUP=$${DEMO_WARMUP:-90} deploy/demo.sh

## bench-audit: what identities and the audit trail cost, by the method of bench-metrics: pairs of
## fresh proxies on epoll, one without and its twin with `identities:` and `audit:` (every request on
## an encrypted collection written to the chained trail), loaded side by side:
## results/embedded/audit-overhead/metrics-cost.md (~7 min with the defaults here)
bench-audit: build bench-jar venv
	DEMO_JOB=overhead-metrics DEMO_METRICS_TWIN=audit DEMO_METRICS_PAIRS=$${DEMO_METRICS_PAIRS:-3} \
	  DEMO_ROUNDS=$${DEMO_ROUNDS:-0} DEMO_SIDE_BY_SIDE_ROUNDS=$${DEMO_SIDE_BY_SIDE_ROUNDS:-4} \
	  DEMO_SECONDS=$${DEMO_SECONDS:-4} DEMO_WARMUP=$${DEMO_WARMUP:-60} deploy/demo.sh

## bench-rewrap: documents re-encrypted per second (3DES -> AES) alone and under a YCSB workload A
## on the same collection, and that workload's throughput before, during and after:
## results/embedded/rewrap/rewrap.md (~8 min)
bench-rewrap: build venv
	DEMO_JOB=rewrap deploy/demo.sh

## bench-crypto: JMH benchmark of every cipher suite next to `openssl speed`, writes results/crypto/ (~15 min)
bench-crypto:
	cd proxy && $(MVN) -q test-compile exec:exec@crypto-bench

## fuzz: coverage-guided fuzzing (Jazzer) of each fuzz target in proxy/src/test/java/dev/fleproxy/fuzz,
## and the leak fuzzer (generated commands through the real proxy, a recording relay before the backend),
## for FUZZ_SECONDS in all (default 300, shared by the targets); executions, coverage and crashes per target
## in results/fuzz/summary.md, the leak fuzzer's figures in results/fuzz/leak-fuzz.md
## (`make test` only replays the committed inputs, and runs 2,500 leak-fuzzer cases)
FUZZ_SECONDS ?= 300
fuzz: build venv
	FUZZ_SECONDS=$(FUZZ_SECONDS) MVN="$(MVN)" PYTHON=$(VENV)/bin/python proxy/fuzz.sh

clean:
	cd proxy && $(MVN) -q clean
	cd ycsb-workloads/binding && $(MVN) -q clean
	cd proxy/bench && $(MVN) -q clean
	rm -rf $(VENV) .tools
