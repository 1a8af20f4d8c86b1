package dev.fleproxy.backend;

import de.bwaldvogel.mongo.MongoVersion;
import java.util.List;

/**
 * The server version the embedded backend announces. mongo-java-server 1.47.0's own
 * {@code ServerVersion.MONGO_5_0} still reports wire version 8, which current drivers refuse
 * (pymongo ≥ 4.18 needs 9), so we announce MongoDB 5.0 with its real wire version, 13.
 */
enum ReportedVersion implements MongoVersion {
    MONGO_5_0(List.of(5, 0, 0), 13);

    private final List<Integer> versionArray;
    private final int wireVersion;

    ReportedVersion(List<Integer> versionArray, int wireVersion) {
        this.versionArray = versionArray;
        this.wireVersion = wireVersion;
    }

    @Override
    public List<Integer> getVersionArray() {
        return versionArray;
    }

    @Override
    public int getWireVersion() {
        return wireVersion;
    }
}
