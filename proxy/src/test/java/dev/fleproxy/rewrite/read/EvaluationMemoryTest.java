package dev.fleproxy.rewrite.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The proxy-wide budget of evaluated queries: shared, all or nothing per take, given back once. */
class EvaluationMemoryTest {
    private final EvaluationMemory memory = new EvaluationMemory(1000);

    @Test
    void queriesShareTheBudgetAndATakeThatDoesNotFitTakesNothing() {
        EvaluationMemory.Lease a = memory.lease();
        EvaluationMemory.Lease b = memory.lease();
        assertTrue(a.grow(600));
        assertFalse(b.grow(500));
        assertEquals(600, memory.used());
        assertTrue(b.grow(400));
        a.end();
        assertEquals(400, memory.used());
    }

    @Test
    void aQueryEndedWhileItsPoolStepRanTakesNothingMoreAndGivesBackOnce() {
        EvaluationMemory.Lease a = memory.lease();
        assertTrue(a.grow(300));
        a.end(); // its connection closed
        assertFalse(a.grow(100), "the step that finishes later holds nothing");
        a.end();
        assertEquals(0, memory.used());
    }

    @Test
    void aReservationIsTakenAheadAndUsedBeforeMoreIsTaken() {
        EvaluationMemory.Lease a = memory.lease();
        assertTrue(a.grow(100));
        assertTrue(a.reserve(500));
        assertEquals(500, memory.used());
        assertTrue(a.grow(300), "within the reservation");
        assertEquals(500, memory.used());
        assertTrue(a.grow(200), "past it, taken as it grows");
        assertEquals(600, memory.used());
        assertFalse(memory.lease().reserve(500));
        a.end();
        assertEquals(0, memory.used());
    }

    @Test
    void whatIsExaminedAndNotKeptGoesBackDownToTheReservation() {
        EvaluationMemory.Lease a = memory.lease();
        assertTrue(a.grow(400)); // a batch while it is examined
        a.shrink(350);           // of which 50 kept
        assertEquals(50, memory.used());
        assertTrue(a.reserve(200));
        assertTrue(a.grow(400));
        assertEquals(450, memory.used());
        a.shrink(400);
        assertEquals(200, memory.used(), "the reservation stays while the query lasts");
        a.end();
        a.shrink(10);
        assertEquals(0, memory.used());
    }

    @Test
    void heldAnswersAndCandidatesDrawOnTheSameBudget() {
        assertTrue(memory.take(900));
        assertFalse(memory.lease().grow(200));
        memory.give(900);
        assertTrue(memory.lease().grow(200));
    }
}
