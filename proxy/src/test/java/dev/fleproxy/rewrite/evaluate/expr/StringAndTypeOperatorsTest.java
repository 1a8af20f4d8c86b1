package dev.fleproxy.rewrite.evaluate.expr;

import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.fails;
import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.is;
import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.refused;

import org.junit.jupiter.api.Test;

class StringAndTypeOperatorsTest {
    @Test
    void strings() {
        is("'ab'", "{$concat: ['a', 'b']}");
        is("null", "{$concat: ['a', null]}");
        fails("{$concat: ['a', 1]}", "{}");
        is("'bc'", "{$substrBytes: ['abcd', 1, 2]}");
        is("'bcd'", "{$substrBytes: ['abcd', 1, -1]}");
        is("''", "{$substrBytes: [null, 0, 1]}");
        fails("{$substrBytes: ['é', 1, 1]}", "{}");
        is("'é'", "{$substrCP: ['aéb', 1, 1]}");
        is("'abc é'", "{$toLower: 'ABC é'}");
        is("'ÉA'", "{$toUpper: 'Éa'}"); // ASCII letters only
        is("''", "{$toUpper: null}");
        is("3", "{$strLenBytes: 'aé'}");
        is("2", "{$strLenCP: 'aé'}");
        fails("{$strLenCP: null}", "{}");
        is("['a', 'b', '']", "{$split: ['a,b,', ',']}");
        is("null", "{$split: [null, ',']}");
        fails("{$split: ['a', '']}", "{}");
        is("'a b'", "{$trim: {input: '\\u00a0 a b\\n'}}");
        is("'ab'", "{$ltrim: {input: 'xxab', chars: 'x'}}");
        is("'  a'", "{$rtrim: {input: '  a  '}}");
        is("2", "{$indexOfBytes: ['abcb', 'c']}");
        is("3", "{$indexOfBytes: ['abcb', 'b', 2]}");
        is("-1", "{$indexOfBytes: ['abcb', 'b', 2, 3]}");
        is("2", "{$indexOfCP: ['éab', 'b']}");
        is("null", "{$indexOfCP: [null, 'b']}");
        is("0", "{$strcasecmp: ['aBc', 'AbC']}");
        is("1", "{$strcasecmp: ['b', 'A']}");
        refused("{$toLower: 1.5}", "{}");
    }

    @Test
    void typesAndConversions() {
        is("'missing'", "{$type: '$x'}");
        is("'int'", "{$type: 1}");
        is("'long'", "{$type: {$numberLong: '1'}}");
        is("'array'", "{$type: [[1]]}");
        is("true", "{$isNumber: {$numberDecimal: '1'}}");
        is("false", "{$isNumber: '1'}");
        is("12", "{$toInt: '12'}");
        is("1", "{$toInt: 1.9}");
        is("1", "{$toInt: true}");
        fails("{$toInt: {$numberLong: '3000000000'}}", "{}");
        fails("{$toInt: [[1]]}", "{}");
        is("null", "{$toInt: null}");
        is("{$numberLong: '5'}", "{$toLong: {$date: 5}}");
        is("2.5", "{$toDouble: '2.5'}");
        is("{$numberDecimal: '2.50000000000000'}", "{$toDecimal: 2.5}");
        is("false", "{$toBool: 0}");
        is("true", "{$toBool: ''}");
        is("'12'", "{$toString: 12}");
        is("'true'", "{$toString: true}");
        is("'1970-01-01T00:00:00.005Z'", "{$toString: {$date: 5}}");
        refused("{$toString: 1.5}", "{}");
        // a string that is not plain digits: mongod's parser is not reproduced, so even onError does not apply
        refused("{$convert: {input: 'x', to: 'int', onError: -1}}", "{}");
        is("0", "{$convert: {input: {a: 1}, to: 'int', onError: 0}}");
        is("'none'", "{$convert: {input: null, to: 'int', onNull: 'none'}}");
        is("{$numberLong: '3'}", "{$convert: {input: 3, to: 18}}");
        refused("{$convert: {input: 1, to: 'objectId'}}", "{}");
    }
}
