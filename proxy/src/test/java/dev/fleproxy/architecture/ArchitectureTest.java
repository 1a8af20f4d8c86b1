package dev.fleproxy.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layering of the proxy's packages (docs/architecture.md), top to bottom. A package may use
 * the packages of its own layer and of the layers below it, never one above; no two packages use
 * each other, and every package has a place here. There is no list of exceptions: a new upward
 * import fails this test, and the fix is to move the piece, not to list it.
 */
class ArchitectureTest {
    static final List<List<String>> LAYERS = List.of(
            List.of("cli"),                         // the commands
            List.of("runtime"),                     // wires a running proxy together
            List.of("admission", "access", "rewrite", "rewrap"), // the gate; access rules and the audit trail; what encryption does to commands, replies, stored data
            List.of("admin"),                       // health, readiness, /metrics: reads the layers below
            List.of("server"),                      // connections, framing, parking, the filter seam
            List.of("metrics", "audit"),            // what the data path records: metrics, the audit trail
            List.of("keys"),                        // policy bound to ciphers; the KMS-backed key cache
            List.of("policy", "tls"),               // the policy as data; TLS contexts
            List.of("protocol", "config"),          // MongoDB commands and errors; the config file
            List.of("kmip", "crypto", "wire", "backend")); // no policy of the proxy in these

    /**
     * rewrite/ inside, top to bottom, held the same way: a sub-package may use those of its own
     * level and below, never one above, and no two use each other. "" is rewrite/ itself.
     */
    static final List<List<String>> REWRITE_LAYERS = List.of(
            List.of(""),                            // EncryptionFilter: which command goes where; CrossReferences
            List.of("scan"),                        // writes the proxy carries out itself: reads, then compare-and-swap
            List.of("read", "write"),               // reads and their replies; writes and collection definitions
            List.of("pipeline"),                    // aggregation pipelines, the shape of what they return
            List.of("query"),                       // filters, expressions, the arguments every command takes
            List.of("paths"),                       // the policy's paths, a reply's shape, a collection's context
            List.of("bson", "evaluate", "search")); // BSON values as stored; queries evaluated on plaintext; search tags

    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.fleproxy");

    private static String[] packages(Stream<String> names) {
        return names.map(n -> "dev.fleproxy." + n + "..").toArray(String[]::new);
    }

    private static String[] rewritePackages(Stream<String> names) {
        return names.map(n -> n.isEmpty() ? "dev.fleproxy.rewrite" : "dev.fleproxy.rewrite." + n + "..")
                .toArray(String[]::new);
    }

    /** No class of a layer (levels.get(i)) depends on one of a layer above it; "layer" names them in a failure. */
    private static void noLayerUsesOneAboveIt(List<List<String>> levels, Function<Stream<String>, String[]> packages,
                                              String layer) {
        for (int i = 1; i < levels.size(); i++) {
            noClasses().that().resideInAnyPackage(packages.apply(levels.get(i).stream()))
                    .should().dependOnClassesThat().resideInAnyPackage(packages.apply(levels.subList(0, i).stream()
                            .flatMap(List::stream)))
                    .because(layer + levels.get(i) + " sits below " + levels.subList(0, i))
                    .check(MAIN);
        }
    }

    @Test
    void noPackageUsesALayerAboveIt() {
        noLayerUsesOneAboveIt(LAYERS, ArchitectureTest::packages, "layer ");
    }

    @Test
    void noTwoPackagesUseEachOther() {
        slices().matching("dev.fleproxy.(*)..").should().beFreeOfCycles().check(MAIN);
    }

    @Test
    void everyClassIsInALayer() {
        classes().should().resideInAnyPackage(packages(LAYERS.stream().flatMap(List::stream)))
                .because("a new package takes its place in LAYERS (and in docs/architecture.md)")
                .check(MAIN);
    }

    @Test
    void noRewritePackageUsesALevelAboveIt() {
        noLayerUsesOneAboveIt(REWRITE_LAYERS, ArchitectureTest::rewritePackages, "rewrite/");
    }

    @Test
    void noTwoRewritePackagesUseEachOther() {
        slices().matching("dev.fleproxy.rewrite.(*)..").should().beFreeOfCycles().check(MAIN);
    }

    @Test
    void theEvaluatorUsesOnlyTheJdkBsonAndIcu() {
        classes().that().resideInAPackage("dev.fleproxy.rewrite.evaluate..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "org.bson..", "com.ibm.icu..",
                        "dev.fleproxy.rewrite.evaluate..")
                .because("the evaluator is MongoDB's query semantics alone, kept apart from the proxy (ICU: "
                        + "the collations MongoDB builds on it)")
                .check(MAIN);
    }

    @Test
    void everyRewriteClassIsInALevel() {
        classes().that().resideInAPackage("dev.fleproxy.rewrite..")
                .should().resideInAnyPackage(rewritePackages(REWRITE_LAYERS.stream().flatMap(List::stream)))
                .because("a new sub-package of rewrite/ takes its place in REWRITE_LAYERS (and in "
                        + "docs/architecture.md)")
                .check(MAIN);
    }
}
