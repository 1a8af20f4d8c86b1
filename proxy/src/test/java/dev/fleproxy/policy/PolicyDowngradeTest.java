package dev.fleproxy.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** What a reload would remove or lower, collection by collection. */
class PolicyDowngradeTest {
    static final String KEY = PolicyParserTest.KEY;
    static final String OLD = PolicyParserTest.OLD;
    static final String OTHER = PolicyParserTest.OLDER;

    static Policy policy(String collections) {
        return PolicyParser.parse(new Yaml(new SafeConstructor(new LoaderOptions())).load(collections), null, "p.yaml");
    }

    static String people(String body) {
        return "hr.people: { key: " + KEY + ", " + body + " }\n";
    }

    static List<String> lowered(String before, String after) {
        return PolicyDowngrade.of(policy(before), policy(after));
    }

    @Test
    void sameOrMoreProtectionIsNotALowering() {
        String base = people("fields: { ssn: { deterministic: true }, name: {} }");
        assertEquals(List.of(), lowered(base, base));
        assertEquals(List.of(), lowered(base, base + "hr.pay: { key: " + KEY + ", fields: \"*\" }\n"));
        assertEquals(List.of(), lowered(base, people("fields: { ssn: { deterministic: true }, name: {}, dob: {} }")));
        assertEquals(List.of(), lowered(base, people("fields: { ssn: { deterministic: true }, name: {} }, previousKeys: ["
                + OLD + "]")));
        assertEquals(List.of(), lowered(base, people("fields: { ssn: { deterministic: true }, name: {} }, "
                + "plaintextReads: deny")));
        assertEquals(List.of(), lowered(people("fields: [ssn], plaintextReads: allow"), people("fields: [ssn]")));
        assertEquals(List.of(), lowered("{}", base));
    }

    @Test
    void aRemovedCollectionOrFieldIsALowering() {
        String two = people("fields: [ssn, name]") + "hr.pay: { key: " + KEY + ", fields: \"*\" }\n";
        assertEquals(List.of("collection hr.pay"), lowered(two, people("fields: [ssn, name]")));
        assertEquals(List.of("collection hr.pay", "collection hr.people"), lowered(two, "{}"));
        assertEquals(List.of("field hr.people.name"), lowered(two, people("fields: [ssn]")
                + "hr.pay: { key: " + KEY + ", fields: \"*\" }\n"));
    }

    @Test
    void allFieldsNarrowedToAListIsALoweringWidenedIsNot() {
        assertEquals(List.of("fields: \"*\" of hr.people (the new file lists only name, ssn)"),
                lowered(people("fields: \"*\""), people("fields: [ssn, name]")));
        assertEquals(List.of(), lowered(people("fields: [ssn, address.street]"), people("fields: \"*\"")));
    }

    @Test
    void aFieldSealedWholeInsideItsParentIsStillEncrypted() {
        assertEquals(List.of(), lowered(people("fields: [ssn, address.street]"), people("fields: [ssn, address]")));
        assertEquals(List.of("field hr.people.address"),
                lowered(people("fields: [ssn, address]"), people("fields: [ssn, address.street]")));
    }

    @Test
    void changingDeterminismEitherWayNeedsARestart() {
        String det = people("fields: { ssn: { deterministic: true } }");
        String rnd = people("fields: { ssn: {} }");
        assertEquals(List.of("deterministic field hr.people.ssn becomes randomized"), lowered(det, rnd));
        assertEquals(List.of("randomized field hr.people.ssn becomes deterministic"), lowered(rnd, det));
        // "*" seals every field randomized, so a deterministic one changes variant that way too
        assertEquals(List.of("deterministic field hr.people.ssn becomes randomized"), lowered(det, people("fields: \"*\"")));
        assertEquals(List.of("randomized field hr.people.address.street becomes deterministic"),
                lowered(people("fields: [address.street]"), people("fields: { address: { deterministic: true } }")));
    }

    @Test
    void rotatingTheKeyKeepsTheOldOneOrIsALowering() {
        String before = people("fields: [ssn]");
        String rotated = "hr.people: { key: " + OTHER + ", previousKeys: [" + KEY + "], fields: [ssn] }\n";
        String replaced = "hr.people: { key: " + OTHER + ", fields: [ssn] }\n";
        assertEquals(List.of(), lowered(before, rotated));
        assertEquals(List.of("key " + KEY + " of hr.people"), lowered(before, replaced));
        // going back drops the newer key, which may have sealed values meanwhile
        assertEquals(List.of("key " + OTHER + " of hr.people"), lowered(rotated, before));
        assertEquals(List.of("key " + OLD + " of hr.people"),
                lowered(people("fields: [ssn], previousKeys: [" + OLD + "]"), people("fields: [ssn]")));
    }

    @Test
    void allowingPlaintextReadsIsALowering() {
        assertEquals(List.of("plaintextReads: allow on hr.people"),
                lowered(people("fields: [ssn]"), people("fields: [ssn], plaintextReads: allow")));
    }

    @Test
    void aSuiteOrSubtypeChangeIsNotALowering() {
        assertEquals(List.of(), lowered(people("fields: [ssn]"), people("fields: [ssn], suite: AES_CBC_HMAC")));
        assertEquals(List.of(), lowered(people("fields: [ssn], suite: AES_GCM"), people("fields: [ssn], envelopeSubtype: 0")));
    }

    @Test
    void everyLoweringIsListed() {
        String before = people("fields: { ssn: { deterministic: true }, name: {} }, previousKeys: [" + OLD + "]")
                + "hr.pay: { key: " + KEY + ", fields: \"*\" }\n";
        String after = "hr.people: { key: " + OTHER + ", fields: { ssn: {} }, plaintextReads: allow }\n";
        assertEquals(List.of("collection hr.pay", "field hr.people.name", "deterministic field hr.people.ssn becomes randomized",
                "key " + KEY + " of hr.people", "key " + OLD + " of hr.people", "plaintextReads: allow on hr.people"),
                lowered(before, after));
    }
}
