package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * $year, $month, $dayOfMonth, $hour, $minute, $second, $millisecond, $dayOfWeek (1 = Sunday),
 * $dayOfYear and $dateToString (the specifiers %Y %m %d %H %M %S %L %j %w %u %z %%): of a date,
 * a timestamp or an ObjectId, in UTC unless a timezone (an Olson name or a ±hh[:mm] offset) is
 * given, as the server's; a null or missing date gives null (or $dateToString's onNull).
 */
final class DateOperators {
    private static final Set<String> PARTS = Set.of("$year", "$month", "$dayOfMonth", "$hour", "$minute", "$second",
            "$millisecond", "$dayOfWeek", "$dayOfYear");
    private static final String DEFAULT_FORMAT = "%Y-%m-%dT%H:%M:%S.%LZ";

    private DateOperators() {
    }

    static Expr compile(String op, BsonValue operand, ExprCompiler c) {
        if (PARTS.contains(op)) {
            Expr date;
            Expr zone = null;
            if (operand.isDocument() && operand.asDocument().containsKey("date")) {
                BsonDocument d = Fields.of(op, operand, Set.of("date", "timezone"), Set.of("date"));
                date = c.expr(d.get("date"));
                zone = d.containsKey("timezone") ? c.expr(d.get("timezone")) : null;
            } else {
                date = c.expr(Values.args(op, operand, 1, 1).get(0));
            }
            Expr tz = zone;
            return scope -> {
                BsonValue v = date.eval(scope);
                ZoneId z = zone(op, tz, scope);
                if (Values.nullish(v) || z == null) {
                    return BsonNull.VALUE;
                }
                return new BsonInt32(part(op, at(op, v, z)));
            };
        }
        if (op.equals("$dateToString")) {
            return dateToString(operand, c);
        }
        return null;
    }

    private static ZonedDateTime at(String op, BsonValue v, ZoneId zone) {
        long millis;
        if (v.isDateTime()) {
            millis = v.asDateTime().getValue();
        } else if (v.isTimestamp()) {
            millis = v.asTimestamp().getTime() * 1000L;
        } else if (v.isObjectId()) {
            millis = v.asObjectId().getValue().getTimestamp() * 1000L;
        } else {
            throw Values.fail(op, "can't convert from BSON type " + Values.typeName(v) + " to Date");
        }
        return Instant.ofEpochMilli(millis).atZone(zone);
    }

    /** UTC without a timezone; null when the timezone expression is null or missing (the result is null). */
    private static ZoneId zone(String op, Expr tz, Scope scope) {
        if (tz == null) {
            return ZoneOffset.UTC;
        }
        BsonValue v = tz.eval(scope);
        if (Values.nullish(v)) {
            return null;
        }
        if (!v.isString()) {
            throw Values.fail(op, "timezone must be a string");
        }
        String s = v.asString().getValue();
        try {
            if (s.matches("[+-][0-9]{2}(:?[0-9]{2})?")) {
                return ZoneOffset.of(s.length() == 5 ? s.substring(0, 3) + ":" + s.substring(3) : s);
            }
            if (s.equals("UTC") || s.equals("GMT") || s.equals("Z")) {
                return ZoneOffset.UTC;
            }
            if (s.contains("/")) {
                return ZoneId.of(s);
            }
        } catch (DateTimeException e) {
            throw Values.fail(op, "unrecognized time zone identifier");
        }
        throw new NotEvaluable(op + " with a timezone other than an Olson name, UTC or an offset");
    }

    private static int part(String op, ZonedDateTime t) {
        return switch (op) {
            case "$year" -> t.getYear();
            case "$month" -> t.getMonthValue();
            case "$dayOfMonth" -> t.getDayOfMonth();
            case "$hour" -> t.getHour();
            case "$minute" -> t.getMinute();
            case "$second" -> t.getSecond();
            case "$millisecond" -> t.getNano() / 1_000_000;
            case "$dayOfWeek" -> t.getDayOfWeek().getValue() % 7 + 1;
            default -> t.getDayOfYear();
        };
    }

    private static Expr dateToString(BsonValue operand, ExprCompiler c) {
        BsonDocument d = Fields.of("$dateToString", operand, Set.of("date", "format", "timezone", "onNull"), Set.of("date"));
        BsonValue format = d.get("format");
        if (format != null && !format.isString()) {
            throw new NotEvaluable("$dateToString with a computed format");
        }
        String f = format == null ? DEFAULT_FORMAT : format.asString().getValue();
        checkFormat(f);
        Expr date = c.expr(d.get("date"));
        Expr tz = d.containsKey("timezone") ? c.expr(d.get("timezone")) : null;
        Expr onNull = d.containsKey("onNull") ? c.expr(d.get("onNull")) : null;
        return scope -> {
            BsonValue v = date.eval(scope);
            ZoneId z = zone("$dateToString", tz, scope);
            if (z == null) {
                return BsonNull.VALUE;
            }
            if (Values.nullish(v)) {
                return onNull == null ? BsonNull.VALUE : onNull.eval(scope);
            }
            ZonedDateTime t = at("$dateToString", v, z);
            if (t.getYear() < 0 || t.getYear() > 9999) {
                throw new NotEvaluable("$dateToString of a year outside 0–9999");
            }
            return new BsonString(format(f, t));
        };
    }

    private static void checkFormat(String f) {
        for (int i = 0; i < f.length(); i++) {
            if (f.charAt(i) == '%') {
                if (i + 1 == f.length() || "YmdHMSLjwuz%".indexOf(f.charAt(i + 1)) < 0) {
                    throw new NotEvaluable("$dateToString format specifiers other than %Y %m %d %H %M %S %L %j %w %u %z %%");
                }
                i++;
            }
        }
    }

    private static String format(String f, ZonedDateTime t) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < f.length(); i++) {
            char ch = f.charAt(i);
            if (ch != '%') {
                out.append(ch);
                continue;
            }
            char s = f.charAt(++i);
            switch (s) {
                case 'Y' -> out.append(String.format("%04d", t.getYear()));
                case 'm' -> out.append(String.format("%02d", t.getMonthValue()));
                case 'd' -> out.append(String.format("%02d", t.getDayOfMonth()));
                case 'H' -> out.append(String.format("%02d", t.getHour()));
                case 'M' -> out.append(String.format("%02d", t.getMinute()));
                case 'S' -> out.append(String.format("%02d", t.getSecond()));
                case 'L' -> out.append(String.format("%03d", t.getNano() / 1_000_000));
                case 'j' -> out.append(String.format("%03d", t.getDayOfYear()));
                case 'w' -> out.append(t.getDayOfWeek().getValue() % 7 + 1);
                case 'u' -> out.append(t.getDayOfWeek().getValue());
                case 'z' -> {
                    int secs = t.getOffset().getTotalSeconds();
                    out.append(secs < 0 ? '-' : '+').append(String.format("%02d%02d", Math.abs(secs) / 3600,
                            Math.abs(secs) / 60 % 60));
                }
                default -> out.append('%');
            }
        }
        return out.toString();
    }
}
