"""Text indexes on encrypted strings (docs/query-model.md#text-indexes): with each sealed string
the proxy stores the tags of its folded prefixes, suffixes or n-grams; a regex anchored with a
literal start (end), or holding literal runs, asks the server for their tags, and the proxy
evaluates the regex exactly on plaintext. Each answer is held against the same query on a
plaintext twin stored directly in the backend."""

import random

import pytest
from bson import Regex

from conftest import EncryptingProxy, client
from test_range_index import candidates
from test_rewrap import rewrap

NAMES = ["Smith", "Smithers", "Smyth", "smith", "SMITH", "Jones", "Johnson", "O.Brien", "OBrien", "Müller",
         "Mueller", "Éclair", "Eclair", "Ábel", "Abel", "Kline", "\u212Aline", "İstanbul", "Zhang", "张伟", "Li",
         "Hudson\n", "Goldsmith", "Blacksmithing"]


def policy(kms):
    key = kms.keys["AES-256"]
    return (f"  people.folded: {{ key: {key}, fields: {{ surname: {{ index: {{ prefix: {{ minLength: 2, maxLength: 6, "
            f"caseFold: true, diacriticFold: true }} }} }} }} }}\n"
            f"  people.exact: {{ key: {key}, fields: {{ surname: {{ index: {{ prefix: {{ minLength: 1, maxLength: 4 }} }} }} }} }}\n"
            f"  people.text: {{ key: {key}, fields: {{ surname: {{ index: {{ suffix: {{ minLength: 2, maxLength: 6, "
            f"caseFold: true }}, substring: {{ gramLength: 3, maxLength: 16, caseFold: true, diacriticFold: true }} }} }} }} }}\n")


@pytest.fixture(scope="module")
def enc(workdir, backend, kms):
    p = EncryptingProxy(workdir, backend.port, kms, policy(kms), name="proxy-prefix", admin=True).start()
    yield p
    p.stop()


def people():
    rnd = random.Random(3)
    docs = [{"_id": i, "surname": rnd.choice(NAMES) + ("" if rnd.random() < 0.3 else f"-{rnd.randrange(1000)}"),
             "k": i % 5} for i in range(5000)]
    # (no sub-document holding a string: the embedded backend matches a regex inside one, MongoDB does not)
    odd = [["Smith", "Jones"], 42, None, {"a": 1}, "S", "", True]
    docs += [{"_id": 5000 + j, "surname": v, "k": 0} for j, v in enumerate(odd)]
    docs.append({"_id": 6000, "k": 0})
    return docs


@pytest.fixture(scope="module")
def loaded(enc, backend):
    via = client(enc.uri())
    plain = client(f"mongodb://127.0.0.1:{backend.port}")
    for name in ("folded", "exact", "text"):
        for c in (via.people[name], plain.twins_people[name]):
            c.drop()
            c.insert_many(people())
        via.people[name].create_index("__fle.surname")
    yield via.people, plain.twins_people
    via.close()
    plain.close()


def ids(cursor):
    return sorted((d["_id"] for d in cursor), key=repr)


BOTH, FOLDED, EXACT, NEITHER = {"folded", "exact"}, {"folded"}, {"exact"}, set()
QUERIES = [  # the filter, and the collections whose index narrows its candidates
    ({"surname": Regex("^Smi")}, BOTH),
    ({"surname": Regex("^Smith-1")}, BOTH),
    ({"surname": {"$regex": "^O\\.Br"}}, BOTH),
    ({"surname": {"$regex": "^Sm[iy]th"}}, BOTH),
    ({"surname": {"$regex": "^Smiths?"}}, BOTH),
    ({"surname": {"$regex": "^Jo", "$options": "i"}}, FOLDED),  # case-insensitive: a caseFold index only
    ({"surname": Regex("^Mü")}, BOTH),
    ({"surname": Regex("^张")}, EXACT),  # one code point: under the folded index's minLength of 2
    ({"surname": Regex("^S")}, EXACT),
    ({"surname": Regex("mith")}, NEITHER),  # not anchored: every candidate
    ({"surname": Regex("^Smith|^Jones")}, NEITHER),
    ({"surname": Regex("^Smi"), "k": 3}, BOTH),
    ({"$and": [{"surname": Regex("^Jo")}, {"surname": {"$ne": "Jones"}}]}, BOTH),
]


@pytest.mark.parametrize("coll", ["folded", "exact"])
@pytest.mark.parametrize("flt,narrowed", QUERIES, ids=[str(q[0]) for q in QUERIES])
def test_anchored_regexes_are_answered_exactly_from_few_candidates(enc, loaded, coll, flt, narrowed):
    via, plain = loaded
    before = candidates(enc, f"people.{coll}")
    got = ids(via[coll].find(flt))
    examined = candidates(enc, f"people.{coll}") - before
    assert got == ids(plain[coll].find(flt)), flt
    if coll in narrowed:
        # the tags narrow it to the strings with that start (folded: Smith, smith, SMITH …), plus
        # "other" (an array) and documents without tags (none here)
        assert examined < min(3 * len(got) + 1_000, 2_500), (flt, examined, len(got))
    else:
        assert examined >= 5000, (flt, examined)


def test_writes_keep_the_prefix_tags_true_and_rewrap_rebuilds_them(enc, loaded):
    via, plain = loaded
    for c in (via.folded, plain.folded):
        c.update_one({"_id": 1}, {"$set": {"surname": "Quixote"}})
        c.update_one({"_id": 2}, {"$unset": {"surname": ""}})
        c.replace_one({"_id": 3}, {"surname": "Quimby", "k": 1})
        c.insert_one({"_id": "new", "surname": "QUINN"})
    flt = {"surname": {"$regex": "^qui", "$options": "i"}}
    before = candidates(enc, "people.folded")
    assert ids(via.folded.find(flt)) == ids(plain.folded.find(flt))
    assert candidates(enc, "people.folded") - before < 100
    r = rewrap(enc.config, "people.folded", "--dry-run")
    assert r.returncode == 0 and "0 would be rewritten" in r.stdout, r.stdout + r.stderr


TEXT_QUERIES = [  # on people.text (a suffix and a substring index), and whether its indexes narrow
    ({"surname": Regex("son$")}, True),  # the suffix index; Hudson\n too ($ before a final newline)
    ({"surname": Regex("SON$", "i")}, True),
    ({"surname": {"$regex": "mith-1.$"}}, False),  # its end is no literal: the runs' n-grams do narrow it
    ({"surname": Regex("mith")}, True),  # the substring index: Smith…, Goldsmith, Blacksmithing
    ({"surname": Regex("MITH", "i")}, True),
    ({"surname": Regex("ull")}, True),  # Müller folded to muller holds ull; Mueller does not
    ({"surname": Regex("mi.h")}, False),  # no run of 3: every candidate
    ({"surname": Regex("o.Bri")}, True),  # the run Bri
    ({"surname": Regex("sm[iy]th")}, False),
    ({"surname": Regex("^Smi")}, False),  # no prefix index here; the run Smi is an n-gram: narrowed
    ({"surname": Regex("smithing$")}, True),  # Blacksmithing-NNN, longer than maxLength 16, is "other": still answered
    ({"surname": Regex("th|on")}, False),
    ({"surname": Regex("ith"), "k": 2}, True),
]


@pytest.mark.parametrize("flt,narrowed", TEXT_QUERIES, ids=[str(q[0]) for q in TEXT_QUERIES])
def test_suffix_and_substring_regexes_are_answered_exactly(enc, loaded, flt, narrowed):
    via, plain = loaded
    before = candidates(enc, "people.text")
    got = ids(via.text.find(flt))
    examined = candidates(enc, "people.text") - before
    assert got == ids(plain.text.find(flt)), flt
    if narrowed:
        assert examined < min(3 * len(got) + 1_000, 2_500), (flt, examined, len(got))


def test_suffix_and_substring_tags_follow_writes(enc, loaded):
    via, plain = loaded
    for c in (via.text, plain.text):
        c.update_one({"_id": 4}, {"$set": {"surname": "Zanzibarson"}})
        c.insert_one({"_id": "new", "surname": "Ozanzibar"})
        c.update_one({"_id": 5}, {"$unset": {"surname": ""}})
    for flt in ({"surname": Regex("anzib")}, {"surname": Regex("barson$")}):
        before = candidates(enc, "people.text")
        assert ids(via.text.find(flt)) == ids(plain.text.find(flt)), flt
        assert candidates(enc, "people.text") - before < 300, flt  # the strings over maxLength are "other"
    r = rewrap(enc.config, "people.text", "--dry-run")
    assert r.returncode == 0 and "0 would be rewritten" in r.stdout, r.stdout + r.stderr
