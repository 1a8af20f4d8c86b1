package dev.fleproxy.rewrite.evaluate;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The fields a find projection names, as a tree of path segments (the server's projection AST):
 * inner nodes for the segments of dotted paths, leaves that include, exclude, $slice or
 * $elemMatch a field. Two specs on one path, or one under another's leaf, collide, as the server
 * says ("Path collision"), and are refused.
 */
final class ProjectionNode {
    enum Kind { PATH, INCLUDE, EXCLUDE, SLICE, ELEM_MATCH }

    final Kind kind;
    final Map<String, ProjectionNode> children = new LinkedHashMap<>();

    ProjectionNode(Kind kind) {
        this.kind = kind;
    }

    /** Adds leaf at path under this (a PATH node); 'name' is the spec's field, for messages. */
    void add(String[] path, ProjectionNode leaf, String name) {
        ProjectionNode node = this;
        for (int i = 0; i < path.length - 1; i++) {
            ProjectionNode child = node.children.get(path[i]);
            if (child == null) {
                child = new ProjectionNode(Kind.PATH);
                node.children.put(path[i], child);
            } else if (child.kind != Kind.PATH) {
                throw new NotEvaluable("projection: path collision at " + name + " (the server refuses it)");
            }
            node = child;
        }
        if (node.children.putIfAbsent(path[path.length - 1], leaf) != null) {
            throw new NotEvaluable("projection: path collision at " + name + " (the server refuses it)");
        }
    }
}
