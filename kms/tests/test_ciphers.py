"""The KMS and the benchmark lab ship in different images, so each keeps its own list of ciphers
(kms/fle_kms/ciphers.py, deploy/bench/names.py): a cipher added to one must be added to the other."""
from deploy.bench import names
from fle_kms import admin, ciphers


def test_the_bench_and_the_kms_name_the_same_ciphers():
    assert set(names.CIPHERS) == set(ciphers.CIPHERS), (
        "the KMS makes keys for a cipher the bench does not measure, or the other way round: "
        "add it to both kms/fle_kms/ciphers.py and deploy/bench/names.py")
    assert set(admin.ALGORITHMS) == set(ciphers.CIPHERS)
    assert {c.lower() for c in ciphers.CIPHERS} <= set(names.ALGORITHMS)
