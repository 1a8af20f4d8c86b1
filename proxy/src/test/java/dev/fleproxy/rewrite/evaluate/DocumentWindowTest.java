package dev.fleproxy.rewrite.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** find's skip and limit (CandidateWindow), applied after the sort. */
class DocumentWindowTest {
    private static final List<Integer> SORTED = List.of(1, 2, 3, 4, 5);

    @Test
    void skipThenLimit() {
        assertEquals(List.of(2, 3), CandidateWindow.apply(SORTED, 1, 2));
        assertEquals(List.of(4, 5), CandidateWindow.apply(SORTED, 3, 9));
        assertEquals(List.of(), CandidateWindow.apply(SORTED, 9, 1));
    }

    @Test
    void limitZeroIsNoLimitAndANegativeLimitCountsItsAbsoluteValue() {
        // find: limit 0 is no limit; a negative limit returns at most its absolute value, in one batch
        assertEquals(SORTED, CandidateWindow.apply(SORTED, 0, 0));
        assertEquals(List.of(1, 2), CandidateWindow.apply(SORTED, 0, -2));
        assertEquals(SORTED, CandidateWindow.apply(SORTED, 0, Long.MIN_VALUE));
    }

    @Test
    void aNegativeSkipIsRefused() {
        assertThrows(NotEvaluable.class, () -> CandidateWindow.apply(SORTED, -1, 0));
        assertThrows(NotEvaluable.class, () -> CandidateWindow.size(5, -1, 0));
    }

    @Test
    void theSizeOfAWindowIsThatOfTheListItCuts() {
        for (long skip = 0; skip < 8; skip++) {
            for (long limit : new long[] {0, 1, 2, -3, 9, Long.MIN_VALUE, Long.MAX_VALUE}) {
                assertEquals(CandidateWindow.apply(SORTED, skip, limit).size(), CandidateWindow.size(5, skip, limit));
            }
        }
    }
}
