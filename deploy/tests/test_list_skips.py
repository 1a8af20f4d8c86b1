"""deploy/list-skips.py, which names every skipped test in `make test`'s summary, on the output and
reports of the three kinds of suite (Surefire 2 and 3 lines, pytest's JUnit XML, node's TAP)."""
import os
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "list-skips.py"


def test_each_skipped_test_is_named_with_its_reason(tmp_path):
    since = time.time() - 1
    reports = tmp_path / "proxy" / "target" / "surefire-reports"
    reports.mkdir(parents=True)
    (reports / "TEST-dev.x.EpollTest.xml").write_text(
        '<testsuite><testcase classname="dev.x.EpollTest" name="onEpoll"><skipped message="Assumption failed: '
        'epoll does not load here"/></testcase><testcase classname="dev.x.EpollTest" name="ok"/></testsuite>')
    (reports / "TEST-dev.x.Old.xml").write_text(
        '<testsuite><testcase classname="dev.x.Old" name="t"><skipped/></testcase></testsuite>')
    pytest_reports = tmp_path / "build" / "test-reports"
    pytest_reports.mkdir(parents=True)
    (pytest_reports / "proxy.xml").write_text(
        '<testsuites><testsuite>'
        + "".join(f'<testcase classname="proxy.tests.test_metrics" name="test_lint[{i}]"><skipped type="pytest.skip" '
                  f'message="promtool is not installed">x</skipped></testcase>' for i in range(3))
        + '<testcase classname="deploy.tests.test_compose" name="test_config"><skipped message="no docker compose"/>'
          '</testcase><testcase classname="a" name="ran"/></testsuite></testsuites>')
    stale = pytest_reports / "old.xml"   # written before the suite began: not this suite's
    stale.write_text('<testsuite><testcase classname="z" name="gone"><skipped message="old"/></testcase></testsuite>')
    os.utime(stale, (since - 100, since - 100))
    log = tmp_path / "suite.log"
    log.write_text("[WARNING] Tests run: 2, Failures: 0, Errors: 0, Skipped: 1, Time elapsed: 0.2 s -- in dev.x.EpollTest\n"
                   "Tests run: 1, Failures: 0, Errors: 0, Skipped: 1, Time elapsed: 0.1 sec - in dev.x.Old\n"
                   "Tests run: 9, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 1 s -- in dev.x.Clean\n"
                   "ok 4 - needs docker # SKIP no docker here\n    ok 1 - nested # SKIP\n")
    out = subprocess.run([sys.executable, str(SCRIPT), str(log), str(since)], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out == ["EpollTest.onEpoll: Assumption failed: epoll does not load here",
                   "Old.t: no reason given",
                   "needs docker: no docker here",
                   "nested: no reason given",
                   "test_metrics.test_lint (3 cases): promtool is not installed",
                   "test_compose.test_config: no docker compose"], out
