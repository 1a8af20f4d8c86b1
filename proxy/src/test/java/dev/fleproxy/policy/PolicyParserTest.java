package dev.fleproxy.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.crypto.TextTags;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** A collection's previousKeys and plaintextReads, as the parser reads them. */
class PolicyParserTest {
    static final String KEY = "89d6d529-a2fe-31dd-ae60-3cb35458dcc0";
    static final String OLD = "da6fd698-4681-3bb5-88ad-d1d9d68b1df6";
    static final String OLDER = "93a7f87f-458c-31be-ad16-d5dfa2fc1bae";

    /** The YAML is read as the config loader reads it, so "true" or "yes" arrive as booleans. */
    static Policy policy(String collectionBody) {
        Object collections = new Yaml(new SafeConstructor(new LoaderOptions()))
                .load("hr.people: { key: " + KEY + ", " + collectionBody + " }\n");
        return PolicyParser.parse(collections, null, "proxy.yaml");
    }

    static String error(String collectionBody) {
        return assertThrows(ConfigException.class, () -> policy(collectionBody)).getMessage();
    }

    @Test
    void previousKeysAndPlaintextReadsDefaultToNoneAndDeny() {
        CollectionPolicy cp = policy("fields: [ssn]").get("hr.people");
        assertEquals(List.of(), cp.previousKeys());
        assertFalse(cp.plaintextReads());
        assertFalse(policy("fields: [ssn], plaintextReads: deny").get("hr.people").plaintextReads());
    }

    @Test
    void readsPreviousKeysInOrderAndCountsThemAmongThePolicysKeys() {
        Policy p = policy("fields: \"*\", previousKeys: [" + OLD + ", " + OLDER + "]");
        CollectionPolicy cp = p.get("hr.people");
        assertEquals(List.of(UUID.fromString(OLD), UUID.fromString(OLDER)), cp.previousKeys());
        assertEquals(Set.of(UUID.fromString(KEY), UUID.fromString(OLD), UUID.fromString(OLDER)), p.keyIds());
        assertTrue(cp.mayOpenWith(UUID.fromString(OLDER)));
    }

    @Test
    void aPathInsideAnotherListedPathIsRefusedHoweverDeep() {
        String e = error("fields: [addr, \"addr.city\"]");
        assertTrue(e.contains("fields: addr.city lies inside addr, which is encrypted as a whole"), e);
        e = error("fields: [\"a.b.c.d\", \"a.b\"]");
        assertTrue(e.contains("a.b.c.d lies inside a.b"), e);
        // siblings and names that only share a beginning are not inside one another
        assertEquals(4, policy("fields: [addr, address, \"a.b\", \"a.bc\"]").get("hr.people").fields().size());
    }

    @Test
    void plaintextReadsAllow() {
        assertTrue(policy("fields: [ssn], plaintextReads: allow").get("hr.people").plaintextReads());
    }

    @Test
    void badPreviousKeysNameWhereAndWhy() {
        String e = error("fields: [ssn], previousKeys: [" + OLD + ", not-a-uuid]");
        assertTrue(e.contains("collections.hr.people.previousKeys[1] must be a key UUID, not not-a-uuid"), e);
        e = error("fields: [ssn], previousKeys: [" + OLD + ", " + OLD.toUpperCase() + "]");
        assertTrue(e.contains("collections.hr.people.previousKeys lists " + OLD + " twice"), e);
        e = error("fields: [ssn], previousKeys: [" + KEY + "]");
        assertTrue(e.contains("collections.hr.people.previousKeys lists " + KEY + ", which is the collection's key"), e);
        e = error("fields: [ssn], previousKeys: " + OLD);
        assertTrue(e.contains("collections.hr.people.previousKeys must be a list of key UUIDs"), e);
        e = error("fields: [ssn], previousKeys: [" + OLD + ", ~]");
        assertTrue(e.contains("previousKeys[1] must be a key UUID, not null"), e);
    }

    @Test
    void plaintextReadsIsAllowOrDenyAndNothingElse() {
        for (String v : List.of("true", "false", "yes", "Allow", "permit", "1", "[allow]")) {
            String e = error("fields: [ssn], plaintextReads: " + v);
            assertTrue(e.contains("collections.hr.people.plaintextReads must be allow or deny (default deny), not "), v + ": " + e);
        }
    }

    /** The error for a policy naming this one namespace. */
    static String namespaceError(String ns) {
        return assertThrows(ConfigException.class, () -> PolicyParser.parse(
                java.util.Map.of(ns, java.util.Map.of("key", KEY, "fields", "*")), null, "proxy.yaml")).getMessage();
    }

    @Test
    void namespacesMongoDbCannotHoldAreRefused() {
        for (char c : "/\\ \"$*<>:|?\0".toCharArray()) {
            String ns = "h" + c + "r.people";
            String e = namespaceError(ns);
            assertTrue(e.contains("the database name 'h") && e.contains("which MongoDB does not allow in database names"),
                    ns + ": " + e);
            assertFalse(e.contains("\0"), "the message stays printable: " + e);
        }
        assertTrue(namespaceError("*.people").contains("never patterns"), namespaceError("*.people"));
        assertTrue(namespaceError(".people").contains("the database name is empty"));
        assertTrue(namespaceError("x".repeat(64) + ".people").contains("longer than MongoDB allows (63 bytes)"));
        assertTrue(namespaceError("people").contains("a namespace is \"database.collection\""));

        // "hr.*" is no wildcard: it would have encrypted a collection named "*" and nothing else
        String star = namespaceError("hr.*");
        assertEquals("proxy.yaml: collections.hr.*: the collection name '*' contains '*'; namespaces are literal "
                + "names, never patterns: list each collection to encrypt", star);
        assertTrue(namespaceError("hr.people.*").contains("'*'"));
        assertTrue(namespaceError("hr.").contains("the collection name is empty"));
        assertTrue(namespaceError("hr.pe$ople").contains("contains '$', which MongoDB does not allow in collection names"));
        assertTrue(namespaceError("hr.pe\0ople").contains("contains NUL"));
        assertTrue(namespaceError("hr.system.users").contains("'system.' are MongoDB's own"));
    }

    @Test
    void namespacesMongoDbAllowsAreAccepted() {
        for (String ns : List.of("hr.people", "hr.people.archive", "hr.system", "hr.systems.x", "h-r_2.p e-o#p%l@e",
                "x".repeat(63) + ".people", "ünï.cödé")) {
            Policy p = PolicyParser.parse(java.util.Map.of(ns, java.util.Map.of("key", KEY, "fields", "*")), null, "p.yaml");
            assertTrue(p.get(ns) != null, ns);
        }
        assertEquals("people.archive", PolicyParser.parse(java.util.Map.of("hr.people.archive",
                java.util.Map.of("key", KEY, "fields", "*")), null, "p.yaml").get("hr.people.archive").collection());
    }

    @Test
    void envelopeSubtypeIsZeroOrSixAtTheTopAndPerCollection() {
        Object people = new Yaml(new SafeConstructor(new LoaderOptions())).load("hr.people: { key: " + KEY + ", fields: [ssn] }");
        for (String v : List.of("7", "1", "5", "-1", "255", "6.0", "'6'", "true", "[6]")) {
            Object subtype = new Yaml(new SafeConstructor(new LoaderOptions())).load(v);
            for (Object collections : new Object[] {people, null, java.util.Map.of()}) {
                String e = assertThrows(ConfigException.class, () -> PolicyParser.parse(collections, subtype, "p.yaml"),
                        v + " with " + collections).getMessage();
                assertEquals("p.yaml: envelopeSubtype must be 6 (encrypted value) or 0 (generic, for the embedded "
                        + "backend)", e);
            }
            String e = error("fields: [ssn], envelopeSubtype: " + v);
            assertTrue(e.startsWith("proxy.yaml: collections.hr.people.envelopeSubtype must be 6"), v + ": " + e);
        }
        assertEquals(0, PolicyParser.parse(people, 0, "p.yaml").get("hr.people").subtype());
        assertEquals(6, PolicyParser.parse(people, null, "p.yaml").get("hr.people").subtype());
        assertEquals(6, policy("fields: [ssn], envelopeSubtype: 6").get("hr.people").subtype());
        assertEquals(0, policy("fields: [ssn], envelopeSubtype: 0").get("hr.people").subtype());
    }

    @Test
    void unknownKeysListTheNewOnes() {
        String e = error("fields: [ssn], previousKey: [" + OLD + "]");
        assertTrue(e.contains("unknown key(s) [previousKey]") && e.contains("previousKeys") && e.contains("plaintextReads"), e);
    }

    @Test
    void aRangeIndexIsReadWithItsDefaultsAndItsBoundsChecked() {
        CollectionPolicy cp = policy("fields: { salary: { index: { range: { min: 0, max: 250000.5 } } }, ssn: {} }")
                .get("hr.people");
        RangeIndex r = cp.fields().get("salary").range();
        assertEquals(new java.math.BigDecimal("250000.5"), r.max());
        assertEquals(0, r.precision());
        assertEquals(1, r.sparsity());
        assertEquals(18, r.bits());
        assertEquals(List.of(cp.fields().get("salary")), cp.searchIndexed());
        assertEquals(null, cp.fields().get("ssn").range());
        String e = error("fields: { a.b: { index: { range: { min: 0, max: 10 } } } }");
        assertTrue(e.contains("top-level field only"), e);
        e = error("fields: { a: { index: { range: { min: 0, max: 10, step: 1 } } } }");
        assertTrue(e.contains("unknown key(s) [step]"), e);
        e = error("fields: { a: { index: { range: { min: 10, max: 10 } } } }");
        assertTrue(e.contains("must be below max"), e);
        e = error("fields: { a: { index: { range: { min: 0, max: 1e18, precision: 2 } } } }");
        assertTrue(e.contains("over 2^62"), e);
        e = error("fields: { a: { index: { range: { max: 10 } } } }");
        assertTrue(e.contains("range.min must be a number"), e);
        e = error("fields: { a: { index: { infix: {} } } }");
        assertTrue(e.contains("unknown key(s) [infix]"), e);
        CollectionPolicy both = policy("fields: { name: { index: { prefix: { maxLength: 8, caseFold: true }, "
                + "range: { min: 0, max: 9 } } } }").get("hr.people");
        assertEquals(new TextIndex(TextTags.Kind.PREFIX, 1, 8, true, false),
                both.fields().get("name").text(TextTags.Kind.PREFIX));
        assertEquals(null, both.fields().get("name").text(TextTags.Kind.SUFFIX));
        FieldRule text = policy("fields: { name: { index: { suffix: { minLength: 2 }, substring: { gramLength: 2, "
                + "maxLength: 64, diacriticFold: true } } } }").get("hr.people").fields().get("name");
        assertEquals(java.util.List.of(new TextIndex(TextTags.Kind.SUFFIX, 2, 16, false, false),
                new TextIndex(TextTags.Kind.SUBSTRING, 2, 64, false, true)), text.text());
        e = error("fields: { a: { index: { substring: { gramLength: 4, maxLength: 3 } } } }");
        assertTrue(e.contains("maxLength (3) is below gramLength (4)"), e);
        e = error("fields: { a: { index: { substring: { minLength: 3 } } } }");
        assertTrue(e.contains("unknown key(s) [minLength]"), e);
        assertTrue(both.fields().get("name").range() != null);
        e = error("fields: { a: { index: { prefix: { minLength: 4, maxLength: 2 } } } }");
        assertTrue(e.contains("maxLength (2) is below minLength (4)"), e);
        e = error("fields: { a: { index: { prefix: { caseFold: yes please } } } }");
        assertTrue(e.contains("caseFold must be true or false"), e);
        RangeIndex dates = policy("fields: { at: { index: { range: { type: date, min: 2020-01-01, "
                + "max: '2030-01-01T00:00:00Z', sparsity: 3 } } } }").get("hr.people").fields().get("at").range();
        assertTrue(dates.dates());
        assertEquals(new java.math.BigDecimal(java.time.Instant.parse("2020-01-01T00:00:00Z").toEpochMilli()), dates.min());
        e = error("fields: { at: { index: { range: { type: date, min: 5, max: 2030-01-01 } } } }");
        assertTrue(e.contains("range.min must be a date"), e);
        e = error("fields: { at: { index: { range: { type: date, min: 2020-01-01, max: 2030-01-01, precision: 2 } } } }");
        assertTrue(e.contains("precision 0"), e);
        e = error("fields: { at: { index: { range: { type: time, min: 0, max: 1 } } } }");
        assertTrue(e.contains("must be number or date"), e);
        e = error("fields: { a.b: { index: { prefix: {} } } }");
        assertTrue(e.contains("top-level field only"), e);
        e = error("fields: { __fle: {} }");
        assertTrue(e.contains("the proxy's own field"), e);
    }
}
