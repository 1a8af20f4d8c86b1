package dev.fleproxy.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.Test;

/** How an identity's subject is compared with a certificate's (docs/access.md, "Identities"). */
class SubjectNameTest {
    /** A subject as the proxy reads it from a certificate. */
    private static String certificate(String dn) {
        return new X500Principal(dn).getName(X500Principal.RFC2253);
    }

    @Test
    void attributeTypesIgnoreCaseAndSpacingDoesNotCount() {
        SubjectName n = SubjectName.parse("CN=payments, O=Example", false);
        assertTrue(n.matches(certificate("cn=payments,o=Example")));
        assertTrue(n.matches(certificate("2.5.4.3=payments,O=Example")), "a known type is its OID");
        assertTrue(n.matches(certificate("CN=payments , O=Example")), "unescaped spaces around values are no part of them");
    }

    @Test
    void valuesCompareByteForByte() {
        SubjectName n = SubjectName.parse("CN=payments,O=Example", false);
        assertFalse(n.matches(certificate("CN=PAYMENTS,O=Example")));
        assertFalse(n.matches(certificate("CN=payments\\ ,O=Example")), "a trailing space the certificate holds");
        assertFalse(n.matches(certificate("CN=payments,O=Example,C=US")));
        assertFalse(n.matches(certificate("O=Example,CN=payments")), "the order of the names counts");
        assertFalse(n.matches(certificate("CN=payments+UID=1,O=Example")));
    }

    @Test
    void valuesIgnoreCaseOnlyWhenAsked() {
        SubjectName n = SubjectName.parse("CN=payments,O=Example", true);
        assertTrue(n.matches(certificate("CN=PAYMENTS,O=EXAMPLE")));
        assertFalse(n.matches(certificate("CN=payments\\ ,O=Example")));
    }

    @Test
    void multiValuedNamesCompareAsSets() {
        assertTrue(SubjectName.parse("CN=a+UID=1", false).matches(certificate("UID=1+CN=a")));
    }

    @Test
    void equalNamesMakeEqualIdentitiesAcrossReloads() {
        assertEquals(SubjectName.parse("CN=a, O=b", false), SubjectName.parse("cn=a,o=b", false));
        assertFalse(SubjectName.parse("CN=a", false).equals(SubjectName.parse("CN=a", true)));
    }

    @Test
    void notADistinguishedName() {
        assertThrows(IllegalArgumentException.class, () -> SubjectName.parse("payments", false));
    }
}
