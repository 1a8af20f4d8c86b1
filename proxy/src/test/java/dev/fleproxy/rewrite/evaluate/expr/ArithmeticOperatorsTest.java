package dev.fleproxy.rewrite.evaluate.expr;

import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.fails;
import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.is;
import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.refused;

import org.junit.jupiter.api.Test;

class ArithmeticOperatorsTest {
    @Test
    void addWidensAndNullWins() {
        is("3", "{$add: [1, 2]}");
        is("{$numberLong: '2147483648'}", "{$add: [2147483647, 1]}");
        is("{$numberLong: '3'}", "{$add: [1, {$numberLong: '2'}]}");
        is("9.223372036854776E18", "{$add: [{$numberLong: '9223372036854775807'}, {$numberLong: '1'}]}");
        is("3.5", "{$add: [1, 2.5]}");
        is("{$numberDecimal: '3.5'}", "{$add: [1, {$numberDecimal: '2.5'}]}");
        is("null", "{$add: [1, null]}");
        is("null", "{$add: [1, '$missing']}");
        is("0", "{$add: []}");
        is("{$date: 1005}", "{$add: [{$date: 1000}, 5]}");
        fails("{$add: [1, 'a']}", "{}");
        fails("{$add: [{$date: 1}, {$date: 2}]}", "{}");
        refused("{$add: [{$date: 1000}, 0.5]}", "{}");
        is("null", "{$add: [null, 'a']}"); // in order: null comes first
    }

    @Test
    void subtractMultiplyDivideMod() {
        is("-1", "{$subtract: [1, 2]}");
        is("{$numberLong: '-2147483649'}", "{$subtract: [-2147483648, 1]}");
        is("{$numberLong: '5'}", "{$subtract: [{$date: 10}, {$date: 5}]}");
        is("{$date: 5}", "{$subtract: [{$date: 10}, 5]}");
        fails("{$subtract: [5, {$date: 10}]}", "{}");
        is("6", "{$multiply: [2, 3]}");
        is("{$numberLong: '4294967296'}", "{$multiply: [65536, 65536]}");
        is("0.5", "{$divide: [1, 2]}");
        is("2.0", "{$divide: [4, 2]}");
        fails("{$divide: [1, 0]}", "{}");
        is("{$numberDecimal: '0.5'}", "{$divide: [1, {$numberDecimal: '2'}]}");
        is("1", "{$mod: [7, 3]}");
        is("-1", "{$mod: [-7, 3]}");
        is("1.5", "{$mod: [5.5, 2]}");
        is("{$numberLong: '1'}", "{$mod: [{$numberLong: '7'}, 3]}");
        fails("{$mod: [1, 0]}", "{}");
        is("null", "{$divide: [null, 0]}");
    }

    @Test
    void unaryAndPowers() {
        is("{$numberLong: '2147483648'}", "{$abs: -2147483648}");
        is("2.5", "{$abs: -2.5}");
        fails("{$abs: {$numberLong: '-9223372036854775808'}}", "{}");
        is("2.0", "{$ceil: 1.5}");
        is("-2.0", "{$floor: -1.5}");
        is("3", "{$floor: 3}");
        is("{$numberDecimal: '2'}", "{$ceil: {$numberDecimal: '1.2'}}");
        is("2.0", "{$sqrt: 4}");
        fails("{$sqrt: -1}", "{}");
        is("0.0", "{$ln: 1}");
        fails("{$ln: 0}", "{}");
        is("2.0", "{$log10: 100}");
        is("3.0", "{$log: [8, 2]}");
        fails("{$log: [8, 1]}", "{}");
        is("8", "{$pow: [2, 3]}");
        is("{$numberLong: '4294967296'}", "{$pow: [2, 32]}");
        is("0.5", "{$pow: [2, -1]}");
        fails("{$pow: [0, -1]}", "{}");
        is("null", "{$sqrt: null}");
        fails("{$abs: 'a'}", "{}");
        refused("{$exp: {$numberDecimal: '1'}}", "{}");
    }

    @Test
    void roundHalfToEvenAndTruncate() {
        is("2.0", "{$round: 2.5}");
        is("4.0", "{$round: 3.5}");
        is("1.23", "{$round: [1.234, 2]}");
        is("1.23", "{$trunc: [1.239, 2]}");
        is("1240", "{$round: [1235, -1]}");
        is("5", "{$round: 5}");
        is("{$numberDecimal: '1.2'}", "{$round: [{$numberDecimal: '1.25'}, 1]}");
        is("-1.0", "{$trunc: -1.9}");
        fails("{$round: [1, 101]}", "{}");
        is("null", "{$round: [null, 1]}");
    }
}
