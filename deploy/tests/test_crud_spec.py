"""deploy/spec/crud_spec.py's own parts, without a server: the collections it reads from spec files,
the policy it writes, and the summary it makes of JUnit files (`make test-crud-spec` runs it all)."""
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "deploy" / "spec"))
import crud_spec  # noqa: E402


def test_namespaces_come_from_entities_and_initial_data(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({
        "createEntities": [{"client": {"id": "c"}}, {"database": {"id": "d0", "databaseName": "crud-v1"}},
                           {"collection": {"id": "c0", "database": "d0", "collectionName": "coll"}}],
        "initialData": [{"databaseName": "crud-v1", "collectionName": "coll", "documents": []},
                        {"databaseName": "other", "collectionName": "seeded", "documents": []}]}))
    (tmp_path / "b.json").write_text(json.dumps({"tests": []}))
    assert crud_spec.spec_namespaces(tmp_path) == ["crud-v1.coll", "other.seeded"]


def test_policy_encrypts_x_on_each_namespace():
    key = "89d6d529-a2fe-31dd-ae60-3cb35458dcc0"
    for deterministic, field in ((False, {}), (True, {"deterministic": True})):
        parsed = yaml.safe_load("collections:\n" + crud_spec.policy(["crud-v1.coll", "db-0.c"], key, deterministic))
        assert parsed["collections"] == {ns: {"key": key, "fields": {"x": field}} for ns in ("crud-v1.coll", "db-0.c")}


def junit(path: Path, cases: str) -> Path:
    path.write_text(f'<testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>')
    return path


def test_summary_lists_what_passes_directly_and_fails_through_the_proxy(tmp_path):
    c = 'classname="test.test_crud_unified.TestUnifiedBulkWrite"'
    direct = junit(tmp_path / "d.xml", f'<testcase {c} name="test_a"/><testcase {c} name="test_b"/>'
                                       f'<testcase {c} name="test_c"><failure message="AssertionError: 1 != 2"/></testcase>'
                                       f'<testcase {c} name="test_d"><skipped message="needs fail points"/></testcase>')
    proxied = junit(tmp_path / "r.xml", f'<testcase {c} name="test_a"/>'
                    f'<testcase {c} name="test_b"><failure message="pymongo.errors.OperationFailure: mongo-fle-proxy: '
                    f"refused $inc, full error: {{'ok': 0.0}}&#10;Traceback\"/></testcase>"
                    f'<testcase {c} name="test_c"/><testcase {c} name="test_d"><skipped message="needs fail points"/></testcase>')
    results = {"direct": crud_spec.outcomes(direct), "randomized": crud_spec.outcomes(proxied)}
    assert results["randomized"]["TestUnifiedBulkWrite::test_b"] == (
        "failed", "OperationFailure: mongo-fle-proxy: refused $inc")
    text = crud_spec.summary("4.20.0", results, {"direct": 1.0, "randomized": 2.0}, ["crud-v1.coll"])
    assert "| direct | 2 | 1 | 1 | 2 of 2 | 1 |" in text
    assert "| randomized | 2 | 1 | 1 | 1 of 2 | 2 |" in text
    assert "- `TestUnifiedBulkWrite::test_b`: OperationFailure: mongo-fle-proxy: refused $inc\n" in text
    assert "Pass through the proxy but not directly: `TestUnifiedBulkWrite::test_c`" in text
