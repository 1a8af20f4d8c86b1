package dev.fleproxy.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.PolicySection;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** identities: and the fields' reveal, mask, deny, query and write rules, and what a reload may change. */
class FieldAccessTest {
    private static final String IDENTITIES = "payments: { subject: 'CN=payments, O=Example' }\n"
            + "support: { uri: 'spiffe://example.org/support' }\nbatch: { user: etl@admin, dns: etl.example }\n";

    static Policy policy(String identities, String field) {
        Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
        Object collections = yaml.load("hr.people: { key: " + PolicyParserTest.KEY + ", fields: { ssn: " + field + " } }\n");
        return PolicyParser.parse(new PolicySection(collections, null, yaml.load(identities), "proxy.yaml"));
    }

    static FieldAccess access(String field) {
        return policy(IDENTITIES, field).get("hr.people").fields().get("ssn").access();
    }

    static String error(String identities, String field) {
        return assertThrows(ConfigException.class, () -> policy(identities, field)).getMessage();
    }

    @Test
    void aConnectionIsTheFirstIdentityAllOfWhoseAttributesMatchElseAnonymous() {
        Identities ids = policy(IDENTITIES, "{}").identities();
        // a distinguished name compares as one: spacing after the comma does not matter
        assertEquals("payments", ids.of(new PeerFacts("CN=payments,O=Example", Set.of(), Set.of(), null)));
        assertEquals("support", ids.of(new PeerFacts("CN=desk", Set.of(), Set.of("spiffe://example.org/support"), null)));
        assertEquals("anonymous", ids.of(new PeerFacts(null, Set.of(), Set.of(), "etl@admin")), "batch needs its dns too");
        assertEquals("batch", ids.of(new PeerFacts("CN=x", Set.of("etl.example"), Set.of(), "etl@admin")));
        assertEquals("anonymous", ids.of(PeerFacts.NONE));
    }

    @Test
    void revealMaskDenyAndTheDefaultsOfQueryAndWrite() {
        FieldAccess a = access("{ reveal: [payments], mask: partial, keep: 2, deny: [anonymous] }");
        assertNull(a.maskFor("payments"));
        assertEquals(FieldAccess.Mask.PARTIAL, a.maskFor("support"));
        assertEquals(FieldAccess.Mask.DENY, a.maskFor("anonymous"));
        assertEquals(2, a.keep());
        assertEquals(Set.of("payments"), a.query(), "who may not see it may not search it either, unless named");
        assertTrue(a.mayWrite("support"), "write is everyone's unless restricted");
        assertEquals(FieldAccess.Mask.DENY, access("{ reveal: [payments] }").maskFor("support"), "deny by default");
        assertEquals(FieldAccess.OPEN, access("{ deterministic: true }"));
        // a deterministic field's write would say whether a value is stored (nModified, a duplicate key)
        FieldAccess det = access("{ deterministic: true, reveal: [payments], mask: redact, query: [payments, batch] }");
        assertEquals(Set.of("payments", "batch"), det.write(), "write defaults to query's list");
        assertTrue(access("{ deterministic: true, reveal: [payments], write: [support] }").mayWrite("support"),
                "unless write is given");
    }

    @Test
    void aRuleNamingAnUnknownIdentityOrAMaskWithoutRevealIsRefused() {
        assertTrue(error(IDENTITIES, "{ reveal: [paymnets] }").contains("'paymnets', which identities: does not define"));
        assertTrue(error(IDENTITIES, "{ mask: redact }").contains("without reveal"));
        assertTrue(error(IDENTITIES, "{ reveal: [payments], mask: blur }").contains("redact, partial, pseudonym or deny"));
        assertTrue(error(IDENTITIES, "{ reveal: [payments], keep: 3 }").contains("mask: partial only"));
        assertTrue(error(IDENTITIES, "{ reveal: [payments], deny: [payments] }").contains("both reveal and deny"));
        assertTrue(error("anonymous: { user: a@b }\n", "{}").contains("not 'anonymous'"));
        assertTrue(error("x: {}\n", "{}").contains("at least one"));
        assertTrue(error("x: { user: nodb }\n", "{}").contains("name@database"));
        assertTrue(error("x: { subject: 'not a dn' }\n", "{}").contains("distinguished name"));
    }

    @Test
    void aReloadThatShowsMoreToMoreIdentitiesIsALowering() {
        Policy before = policy(IDENTITIES, "{ reveal: [payments], mask: partial, keep: 2, deny: [anonymous] }");
        List<String> wider = PolicyDowngrade.of(before,
                policy(IDENTITIES, "{ reveal: [payments, support], mask: partial, keep: 2, deny: [anonymous] }"));
        assertTrue(wider.stream().anyMatch(l -> l.startsWith("reveal of hr.people.ssn widened")), wider.toString());
        assertTrue(PolicyDowngrade.of(before, policy(IDENTITIES, "{ reveal: [payments], mask: partial, keep: 4 }"))
                .stream().anyMatch(l -> l.contains("mask of hr.people.ssn") || l.contains("deny of")));
        assertTrue(PolicyDowngrade.of(before, policy(IDENTITIES, "{}")).stream()
                .anyMatch(l -> l.contains("widened to everyone")));
        String moved = IDENTITIES.replace("CN=payments, O=Example", "CN=someone-else");
        assertTrue(PolicyDowngrade.of(before, policy(moved, "{ reveal: [payments], mask: partial, keep: 2, "
                + "deny: [anonymous] }")).stream().anyMatch(l -> l.contains("identity 'payments'")));
        assertEquals(List.of(), PolicyDowngrade.of(before, policy(IDENTITIES, "{ reveal: [payments], mask: redact, "
                + "deny: [anonymous, support] }")), "showing less is applied");
    }
}
