package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * $concat, $substrBytes/$substrCP, $toLower/$toUpper (ASCII letters only, as the server), the
 * $strLen's, $split, $trim/$ltrim/$rtrim, $indexOfBytes/$indexOfCP and $strcasecmp. Byte
 * offsets count UTF-8 bytes, CP ones code points. Where the server coerces a number to a string,
 * the proxy takes int32 and int64 (a double's or a date's text it does not reproduce).
 */
final class StringOperators {
    /** The server's default $trim characters: NUL, the ASCII spaces, U+00A0, U+1680, U+2000–U+200A. */
    private static final String WHITESPACE = "\u0000 \t\n\u000B\f\r\u00A0\u1680\u2000\u2001\u2002\u2003\u2004"
            + "\u2005\u2006\u2007\u2008\u2009\u200A";

    private StringOperators() {
    }

    static Expr compile(String op, BsonValue operand, ExprCompiler c) {
        return switch (op) {
            case "$concat" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 0, Integer.MAX_VALUE));
                yield scope -> {
                    StringBuilder out = new StringBuilder();
                    List<BsonValue> vs = Values.operands(scope, args, v -> {
                        if (!v.isString()) {
                            throw Values.fail(op, "only supports strings");
                        }
                        out.append(v.asString().getValue());
                    });
                    return vs == null ? BsonNull.VALUE : new BsonString(out.toString());
                };
            }
            case "$toLower", "$toUpper" -> {
                Expr arg = c.expr(Values.args(op, operand, 1, 1).get(0));
                boolean lower = op.equals("$toLower");
                yield scope -> new BsonString(ascii(coerce(op, arg.eval(scope)), lower));
            }
            case "$strcasecmp" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 2, 2));
                yield scope -> {
                    String a = ascii(coerce(op, args.get(0).eval(scope)), false);
                    String b = ascii(coerce(op, args.get(1).eval(scope)), false);
                    return new BsonInt32(Integer.signum(bytes(a, b)));
                };
            }
            case "$strLenBytes", "$strLenCP" -> {
                Expr arg = c.expr(Values.args(op, operand, 1, 1).get(0));
                yield scope -> {
                    String s = string(op, arg.eval(scope));
                    return new BsonInt32(op.equals("$strLenCP") ? s.codePointCount(0, s.length())
                            : s.getBytes(StandardCharsets.UTF_8).length);
                };
            }
            case "$substrBytes", "$substrCP", "$substr" -> substr(op, c.exprs(Values.args(op, operand, 3, 3)));
            case "$split" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 2, 2));
                yield scope -> split(args.get(0).eval(scope), args.get(1).eval(scope));
            }
            case "$trim", "$ltrim", "$rtrim" -> trim(op, operand, c);
            case "$indexOfBytes", "$indexOfCP" -> indexOf(op, c.exprs(Values.args(op, operand, 2, 4)));
            default -> null;
        };
    }

    /** Value::coerceToString for the operators that coerce: null and missing are "". */
    private static String coerce(String op, BsonValue v) {
        if (Values.nullish(v)) {
            return "";
        }
        if (v.isString()) {
            return v.asString().getValue();
        }
        if (v.isInt32() || v.isInt64()) {
            return Long.toString(v.asNumber().longValue());
        }
        if (v.isDouble() || v.isDecimal128() || v.isDateTime() || v.isTimestamp() || v.isSymbol() || v.isJavaScript()) {
            throw new NotEvaluable(op + " of a value the server turns into text in its own way");
        }
        throw Values.fail(op, "can't convert from BSON type " + Values.typeName(v) + " to String");
    }

    private static String string(String op, BsonValue v) {
        if (v == null || !v.isString()) {
            throw Values.fail(op, "requires a string argument");
        }
        return v.asString().getValue();
    }

    private static String ascii(String s, boolean lower) {
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (lower && ch >= 'A' && ch <= 'Z') {
                ch = (char) (ch + 32);
            } else if (!lower && ch >= 'a' && ch <= 'z') {
                ch = (char) (ch - 32);
            }
            out.append(ch);
        }
        return out.toString();
    }

    static int bytes(String a, String b) {
        byte[] x = a.getBytes(StandardCharsets.UTF_8);
        byte[] y = b.getBytes(StandardCharsets.UTF_8);
        return java.util.Arrays.compareUnsigned(x, y);
    }

    private static Expr substr(String op, List<Expr> args) {
        return scope -> {
            String s = coerce(op, args.get(0).eval(scope));
            BsonValue startV = args.get(1).eval(scope);
            BsonValue lengthV = args.get(2).eval(scope);
            if (!Values.isNumber(startV) || !Values.isNumber(lengthV)) {
                throw Values.fail(op, "starting index and length must be numeric");
            }
            Long start = Values.exactLong(startV);
            Long length = Values.exactLong(lengthV);
            if (start == null || length == null) {
                throw new NotEvaluable(op + " with a fractional index or length"); // the server truncates its own way
            }
            if (op.equals("$substrCP")) {
                if (start < 0 || length < 0) {
                    throw Values.fail(op, "starting index and length must be non-negative");
                }
                int cps = s.codePointCount(0, s.length());
                int from = (int) Math.min(start, cps);
                int to = (int) Math.min(cps, from + Math.min(length, cps));
                return new BsonString(s.substring(s.offsetByCodePoints(0, from), s.offsetByCodePoints(0, to)));
            }
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            if (start < 0) {
                throw Values.fail(op, "starting index must be non-negative");
            }
            if (start >= b.length) {
                return new BsonString("");
            }
            int from = start.intValue();
            int to = length < 0 ? b.length : (int) Math.min(b.length, from + length);
            if (continuation(b, from) || to < b.length && continuation(b, to)) {
                throw Values.fail(op, "invalid range: a byte index is in the middle of a UTF-8 character");
            }
            return new BsonString(new String(b, from, to - from, StandardCharsets.UTF_8));
        };
    }

    private static boolean continuation(byte[] b, int i) {
        return i < b.length && (b[i] & 0xC0) == 0x80;
    }

    private static BsonValue split(BsonValue input, BsonValue delimiter) {
        if (Values.nullish(input)) {
            return BsonNull.VALUE;
        }
        if (!input.isString() || Values.nullish(delimiter) || !delimiter.isString()) {
            throw Values.fail("$split", "requires a string and a string delimiter");
        }
        String s = input.asString().getValue();
        String d = delimiter.asString().getValue();
        if (d.isEmpty()) {
            throw Values.fail("$split", "requires a non-empty separator");
        }
        BsonArray out = new BsonArray();
        int at = 0;
        for (int i = s.indexOf(d); i >= 0; i = s.indexOf(d, at)) {
            out.add(new BsonString(s.substring(at, i)));
            at = i + d.length();
        }
        out.add(new BsonString(s.substring(at)));
        return out;
    }

    private static Expr trim(String op, BsonValue operand, ExprCompiler c) {
        BsonDocument d = Fields.of(op, operand, Set.of("input", "chars"), Set.of("input"));
        Expr input = c.expr(d.get("input"));
        Expr chars = d.containsKey("chars") ? c.expr(d.get("chars")) : null;
        return scope -> {
            BsonValue in = input.eval(scope);
            if (Values.nullish(in)) {
                return BsonNull.VALUE;
            }
            if (!in.isString()) {
                throw Values.fail(op, "requires its input to be a string");
            }
            String set = WHITESPACE;
            if (chars != null) {
                BsonValue cv = chars.eval(scope);
                if (Values.nullish(cv)) {
                    return BsonNull.VALUE;
                }
                if (!cv.isString()) {
                    throw Values.fail(op, "requires 'chars' to be a string");
                }
                set = cv.asString().getValue();
            }
            String s = in.asString().getValue();
            int from = 0;
            int to = s.length();
            if (!op.equals("$rtrim")) {
                while (from < to && set.indexOf(s.codePointAt(from)) >= 0) {
                    from += Character.charCount(s.codePointAt(from));
                }
            }
            if (!op.equals("$ltrim")) {
                while (to > from && set.indexOf(s.codePointBefore(to)) >= 0) {
                    to -= Character.charCount(s.codePointBefore(to));
                }
            }
            return new BsonString(s.substring(from, to));
        };
    }

    private static Expr indexOf(String op, List<Expr> args) {
        return scope -> {
            BsonValue in = args.get(0).eval(scope);
            if (Values.nullish(in)) {
                return BsonNull.VALUE;
            }
            if (!in.isString()) {
                throw Values.fail(op, "requires a string as the first argument");
            }
            BsonValue token = args.get(1).eval(scope);
            if (token == null || !token.isString()) {
                throw Values.fail(op, "requires a string as the second argument");
            }
            boolean cp = op.equals("$indexOfCP");
            String s = in.asString().getValue();
            byte[] hay = s.getBytes(StandardCharsets.UTF_8);
            int length = cp ? s.codePointCount(0, s.length()) : hay.length;
            long start = args.size() > 2 ? index(op, args.get(2).eval(scope)) : 0;
            long end = args.size() > 3 ? Math.min(length, index(op, args.get(3).eval(scope))) : length;
            if (start > length || start > end) {
                return new BsonInt32(-1);
            }
            if (cp) {
                String range = s.substring(s.offsetByCodePoints(0, (int) start), s.offsetByCodePoints(0, (int) end));
                int i = range.indexOf(token.asString().getValue());
                return new BsonInt32(i < 0 ? -1 : (int) start + range.codePointCount(0, i));
            }
            byte[] needle = token.asString().getValue().getBytes(StandardCharsets.UTF_8);
            for (int i = (int) start; i + needle.length <= end; i++) {
                if (java.util.Arrays.equals(hay, i, i + needle.length, needle, 0, needle.length)) {
                    return new BsonInt32(i);
                }
            }
            return new BsonInt32(-1);
        };
    }

    private static long index(String op, BsonValue v) {
        Integer i = Values.isNumber(v) ? Values.exactInt(v) : null;
        if (i == null) {
            throw Values.fail(op, "start and end indexes must be whole numbers");
        }
        if (i < 0) {
            throw Values.fail(op, "start and end indexes must be non-negative");
        }
        return i;
    }
}
