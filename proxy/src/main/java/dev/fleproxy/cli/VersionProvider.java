package dev.fleproxy.cli;

import picocli.CommandLine;

final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
        String v = Main.class.getPackage().getImplementationVersion();
        return new String[] {"mongo-fle-proxy " + (v == null ? "(development build)" : v)};
    }
}
