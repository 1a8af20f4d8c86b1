package dev.fleproxy.policy;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.security.auth.x500.X500Principal;

/**
 * A certificate subject as an identity names it, compared as a distinguished name (RFC 4514):
 * the same relative names in the same order, each the same set of attributes; an attribute's
 * type compares without regard to case ({@code cn} is {@code CN}, and a known name is its OID),
 * its value byte for byte — so {@code CN=PAYMENTS} and {@code CN=payments\ } (a trailing space
 * the certificate holds) are not {@code CN=payments} — unless the identity asks for values to
 * compare ignoring case ({@code subjectIgnoreCase: true}). Spacing around separators does not
 * count; it is not part of any value.
 */
public final class SubjectName {
    private final List<List<String>> rdns;
    private final boolean ignoreCase;
    private final String text;

    private SubjectName(List<List<String>> rdns, boolean ignoreCase, String text) {
        this.rdns = rdns;
        this.ignoreCase = ignoreCase;
        this.text = text;
    }

    /** @throws IllegalArgumentException if the text is not a distinguished name */
    public static SubjectName parse(String dn, boolean ignoreCase) {
        return new SubjectName(canonical(dn), ignoreCase, dn);
    }

    /** True if a certificate's subject (RFC 2253, as the JDK writes it) is this name. */
    public boolean matches(String certificateSubject) {
        List<List<String>> other;
        try {
            other = canonical(certificateSubject);
        } catch (IllegalArgumentException unreadable) {
            return false;
        }
        if (other.size() != rdns.size()) {
            return false;
        }
        for (int i = 0; i < rdns.size(); i++) {
            List<String> a = rdns.get(i);
            List<String> b = other.get(i);
            if (a.size() != b.size()) {
                return false;
            }
            for (int j = 0; j < a.size(); j++) {
                if (ignoreCase ? !a.get(j).equalsIgnoreCase(b.get(j)) : !a.get(j).equals(b.get(j))) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Each RDN as its attributes "type=value", sorted: the type as the JDK names it (keywords it
     * knows, else the OID), in lower case; the value unescaped (a value in hex, #…, as its hex).
     */
    private static List<List<String>> canonical(String dn) {
        String rfc2253 = new X500Principal(dn).getName(X500Principal.RFC2253); // known names and OIDs alike
        LdapName name;
        try {
            name = new LdapName(rfc2253);
        } catch (InvalidNameException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        List<List<String>> out = new ArrayList<>();
        for (Rdn rdn : name.getRdns()) {
            TreeSet<String> attributes = new TreeSet<>();
            try {
                var all = rdn.toAttributes().getAll();
                while (all.hasMore()) {
                    var a = all.next();
                    Object v = a.get();
                    String value = v instanceof byte[] b ? "#" + HexFormat.of().formatHex(b) : String.valueOf(v);
                    attributes.add(a.getID().toLowerCase(Locale.ROOT) + "=" + value);
                }
            } catch (javax.naming.NamingException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            out.add(new ArrayList<>(attributes));
        }
        return out;
    }

    /** The same name compared the same way (a reload that keeps an identity's subject keeps the identity). */
    @Override
    public boolean equals(Object o) {
        return o instanceof SubjectName n && n.rdns.equals(rdns) && n.ignoreCase == ignoreCase;
    }

    @Override
    public int hashCode() {
        return rdns.hashCode() * 31 + Boolean.hashCode(ignoreCase);
    }

    @Override
    public String toString() {
        return text;
    }
}
