"""The evaluated-cost section of the overhead report, from figures made up here (the measurement
itself runs against a real proxy in `make bench-evaluated` and `make bench-overhead`)."""
from deploy.bench import evaluated_cost, stats


def test_the_section_has_a_row_per_candidate_count_with_spreads_and_the_command():
    rows = [{"candidates": k, "queries": 3,
             "cpu": {evaluated_cost.EVALUATED: stats.spread([2.0, 2.5, 3.0]),
                     evaluated_cost.DECRYPTED: stats.spread([1.0, 1.0, 1.5])},
             "wall": {evaluated_cost.EVALUATED: stats.spread([30.0]), evaluated_cost.DECRYPTED: stats.spread([25.0])},
             "ratio": stats.spread([2.0, 2.5, 2.0]), "added_ms": stats.spread([5.0])} for k in (100, 10_000)]
    text = "\n".join(evaluated_cost.section(rows, 3, "make bench-overhead"))
    assert "## What a query the proxy evaluates costs" in text
    assert "| 10,000 | 2.50 (2.00–3.00) | 1.00 (1.00–1.50) | 2.00 (2.00–2.50) | 30.0 | +5.0 |" in text
    assert "| 100 |" in text and "`make bench-overhead`" in text and "3 measured rounds" in text
