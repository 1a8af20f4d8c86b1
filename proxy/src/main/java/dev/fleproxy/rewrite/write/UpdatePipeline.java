package dev.fleproxy.rewrite.write;

import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.PathKind;
import dev.fleproxy.rewrite.pipeline.PipelineAnalyzer;
import dev.fleproxy.rewrite.pipeline.PipelineSchema;
import dev.fleproxy.rewrite.query.Expressions;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** Update pipelines (an update given as an aggregation pipeline) on an encrypted collection. */
final class UpdatePipeline {
    private UpdatePipeline() {
    }

    /**
     * Pipeline updates: removing fields and computing on plain ones are fine; computing on
     * encrypted values, copying them (an envelope is bound to its field) or assigning to
     * encrypted fields is not.
     */
    static void check(BsonArray pipeline, CollectionContext ctx) {
        PipelineSchema s = new PipelineSchema(ctx);
        for (BsonValue stageValue : pipeline) {
            BsonDocument stage = PipelineAnalyzer.stage(stageValue, ctx);
            String name = stage.getFirstKey();
            BsonValue spec = stage.get(name);
            switch (name) {
                case "$set", "$addFields", "$project" -> {
                    if (spec.isDocument()) {
                        for (Map.Entry<String, BsonValue> e : spec.asDocument().entrySet()) {
                            BsonValue v = e.getValue();
                            boolean inclusion = name.equals("$project") && (v.isNumber() || v.isBoolean());
                            if (!inclusion && s.kind(e.getKey()) != PathKind.NONE) {
                                throw s.refuse(e.getKey(), "a pipeline update assigning to it");
                            }
                            if (Expressions.reference(v) == null) {
                                s.refuseReferences(v, "a pipeline update");
                            } else if (s.kind(Expressions.reference(v)) == PathKind.INSIDE) {
                                throw s.refuse(Expressions.reference(v), "a pipeline update reading inside it");
                            } else if (s.kind(Expressions.reference(v)) != PathKind.NONE) {
                                // a v2 envelope opens only in the field it was written for
                                throw s.refuse(Expressions.reference(v), "a pipeline update copying it to '"
                                        + e.getKey() + "' (an envelope is bound to its field)");
                            }
                        }
                    }
                }
                case "$unset" -> {
                    // removal is fine
                }
                default -> s.refuseMentions(spec, "pipeline update stage " + name);
            }
        }
    }
}
