package dev.fleproxy.rewrite.paths;

import dev.fleproxy.protocol.Refusal;

/**
 * What a check of an expression or of a value it does not follow needs to know of the documents
 * it runs on: where a path stands, and the refusal that names the policy field it touches.
 */
public interface FieldPaths {
    PathKind kind(String path);

    Refusal refuse(String path, String what);
}
